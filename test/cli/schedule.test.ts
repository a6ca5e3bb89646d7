/**
 * `harness schedule`: an interval schedule fires on its own, each firing a new session with a
 * turn (shown in `harness sessions` and the trace as the schedule's); a paused one does not fire;
 * trigger fires once; delete removes it; bad flags are one-line errors; --help names every flag.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type TestHarness } from '../support/harness';
import { cliEnv, describeResult, parseJson, removeTempDirs, runCli, stackLines, tempDir, writeScript } from '../support/cli';
import { listSessions } from '../../client/session-list';

let h: TestHarness;
let dir: string;
let env: NodeJS.ProcessEnv;
const cli = (args: string[]) => runCli(args, { env, cwd: dir, timeoutMs: 60_000 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `check` returns a value (not undefined), or fails after `tries`. */
async function until<T>(what: string, check: () => Promise<T | undefined>, tries = 120): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await check();
    if (v !== undefined) return v;
    await sleep(500);
  }
  throw new Error(`gave up waiting for ${what}`);
}

beforeAll(async () => {
  h = await startHarness();
  dir = tempDir('harness-cli-schedule-');
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(dir, 'home') });
});
afterAll(async () => {
  await h?.stop();
  removeTempDirs();
});

describe('harness schedule', () => {
  it('--help documents every flag of create, and the subcommands', async () => {
    const r = await cli(['schedule', 'create', '--help']);
    expect(r.code, describeResult(r)).toBe(0);
    for (const flag of ['--cron', '--every', '--tz', '--overlap', '--id', '--session', '--agent', '--model', '--policy', '--config', '--max-steps', '--paused', '--json', '--file']) {
      expect(r.stdout).toContain(flag);
    }
    expect(r.stdout).toMatch(/skip.*buffer.*allow/s);
    const top = await cli(['schedule', '--help']);
    for (const sub of ['create', 'list', 'pause', 'resume', 'trigger', 'delete']) expect(top.stdout).toContain(sub);
  });

  it.each([
    [['--cron', '0 9 * * 1-5', '--every', '10m'], /either a cron expression or an interval/],
    [['--cron', '0 25 * * *'], /invalid cron expression.*hour/],
    [['--cron', '0 9 * *'], /invalid cron expression.*4 fields/],
    [['--every', 'soon'], /invalid interval/],
    [['--every', '500ms'], /at least 1s/],
    [['--cron', '0 9 * * *', '--tz', 'Mars/Olympus'], /unknown time zone/],
    [['--every', '1m', '--overlap', 'sometimes'], /unknown overlap policy/],
    [['--every', '1m', '--id', 'no spaces'], /invalid schedule id/],
    [[], /say when the schedule fires/],
    [['--every', '1m', '--session', 's-1', '--agent', 'x'], /keeps the model and settings/],
  ])('refuses %j with one line and a hint', async (flags, message) => {
    const r = await cli(['schedule', 'create', ...flags, 'hello']);
    expect(r.code, describeResult(r)).toBe(2);
    expect(r.errLines[0]).toMatch(message);
    expect(r.errLines[1]).toMatch(/^hint: /);
    expect(r.errLines).toHaveLength(2);
    expect(stackLines(r.stderr)).toEqual([]);
  });

  it('an unknown schedule is a one-line error', async () => {
    const r = await cli(['schedule', 'pause', 'no-such-schedule']);
    expect(r.code, describeResult(r)).toBe(1);
    expect(r.errLines).toEqual(['error: no schedule named no-such-schedule', 'hint: list schedules with `harness schedule list`']);
  });

  it('an interval schedule fires twice (a new session and turn each), paused it does not, trigger fires once, delete removes it', async () => {
    const script = writeScript(dir, { steps: [{ content: 'Standup summary done. HARNESS_OK' }] });
    const id = `every-${Date.now().toString(36)}`;
    const made = await cli(['schedule', 'create', '--every', '2s', '--id', id, '--model', `scripted:${script}`, '--json', 'Write the standup summary']);
    expect(made.code, describeResult(made)).toBe(0);
    expect(parseJson(made)).toMatchObject({ id, spec: 'every 2s', overlap: 'skip', paused: false, target: { new_session: true } });
    const handle = h.client.schedule.getHandle(id);

    // Two firings, each a session of this schedule whose turn finished.
    const sessions = await until('two firings with finished turns', async () => {
      const rows = (await listSessions(h.client, { limit: 50, taskQueue: h.taskQueue })).filter((r) => r.schedule === id && r.turns >= 1 && r.state === 'idle');
      return rows.length >= 2 ? rows : undefined;
    });
    for (const row of sessions) {
      expect(row.session_id).toMatch(new RegExp(`^${id}-\\d{8}-\\d{6}$`));
      expect(row.last_outcome).toBe('final_answer');
      expect(row.last_task).toBe('Write the standup summary');
    }
    const firings = (await handle.describe()).info.recentActions.map((a) => a.action.workflow.workflowId);
    expect(firings.length).toBeGreaterThanOrEqual(2);
    expect(await h.client.workflow.getHandle(firings[0]!).result()).toMatchObject({ outcome: 'final_answer' });

    // `harness sessions` marks them; the trace says the schedule sent the message.
    const listed = await cli(['sessions', '--limit', '50']);
    expect(listed.stdout.split('\n').find((l) => l.startsWith(sessions[0]!.session_id))).toContain(`(schedule ${id})`);
    const trace = await cli(['trace', sessions[0]!.session_id, '--json']);
    expect(trace.code, describeResult(trace)).toBe(0);
    expect(trace.stdout).toContain(`schedule ${id}`);

    const list = await until('the list to show it', async () => {
      const r = await cli(['schedule', 'list', '--json']);
      const found = parseJson<{ id: string; spec: string; next_firing?: string; paused: boolean }[]>(r).find((s) => s.id === id);
      return found;
    });
    expect(list).toMatchObject({ spec: 'every 2s', paused: false });
    expect(list.next_firing).toMatch(/^\d{4}-/);
    const table = await cli(['schedule', 'list']);
    expect(table.stdout).toMatch(new RegExp(`${id}\\s+every 2s`));

    // Paused: no firing in several intervals.
    const paused = await cli(['schedule', 'pause', id]);
    expect(paused.code, describeResult(paused)).toBe(0);
    await until('paused', async () => ((await handle.describe()).state.paused ? true : undefined));
    await sleep(1_000);
    const before = (await handle.describe()).info.numActionsTaken;
    await sleep(7_000);
    const after = await handle.describe();
    expect(after.info.numActionsTaken).toBe(before);
    expect((await cli(['schedule', 'list'])).stdout).toMatch(new RegExp(`${id}\\s+every 2s\\s+paused`));

    // Trigger fires once, paused or not.
    const trig = await cli(['schedule', 'trigger', id]);
    expect(trig.code, describeResult(trig)).toBe(0);
    await until('the triggered firing', async () => ((await handle.describe()).info.numActionsTaken === before + 1 ? true : undefined));
    await sleep(3_000);
    expect((await handle.describe()).info.numActionsTaken).toBe(before + 1);

    const resumed = await cli(['schedule', 'resume', id]);
    expect(resumed.code, describeResult(resumed)).toBe(0);
    expect((await handle.describe()).state.paused).toBe(false);

    const del = await cli(['schedule', 'delete', id]);
    expect(del.code, describeResult(del)).toBe(0);
    const gone = await cli(['schedule', 'pause', id]);
    expect(gone.errLines[0]).toBe(`error: no schedule named ${id}`);
  });
});
