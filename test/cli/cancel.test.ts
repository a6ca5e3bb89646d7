/**
 * `harness cancel` and HarnessClient.cancel() against a real worker, Temporal and Docker, under
 * the default policy: a turn whose run_shell runs `sleep 300` stops, ends `cancelled`, leaves no
 * process of the command in the container, says `cancelled` in its trace, and its session takes
 * the next message; a turn cancelled while it waits for an approval shows the approval
 * cancelled, not denied; a cancelled session ends and its sandbox is removed; ids that name
 * nothing running get one line and a hint.
 */
import path from 'node:path';
import { PassThrough } from 'node:stream';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containerName, removeOrphans } from '../../activities/sandbox/containers';
import { HarnessClient } from '../../api/client';
import { decideApprovals, sendMessage, sessionState } from '../../client/session-client';
import type { TurnResult } from '../../deterministic/session';
import type { SessionConfig } from '../../deterministic/session-config';
import { UserError } from '../../machine/errors';
import { DEFAULT_POLICY, newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';
import { cliEnv, describeResult, parseJson, removeTempDirs, runCli, tempDir } from '../support/cli';

const docker = new Docker();
let h: TestHarness;
let env: NodeJS.ProcessEnv;
const cli = (args: string[]) => runCli(args, { env, timeoutMs: 180_000 });

beforeAll(async () => {
  h = await startHarness();
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(tempDir('harness-cli-cancel-'), 'home') });
}, 60_000);
afterAll(async () => {
  await removeOrphans(docker, [], { home: h?.home }).catch(() => undefined);
  await h?.stop();
  removeTempDirs();
});

/** A session whose first turn runs `sleep <n>` in its sandbox and whose second answers. */
const config = (seconds: number): SessionConfig =>
  scriptedConfig(
    {
      steps: [
        { tool_calls: [{ name: 'run_shell', arguments: { command: `sleep ${seconds}; echo late > late.txt`, timeout_ms: 600_000 } }] },
        { expect: { messages_contain: 'The turn was cancelled' }, content: 'Back after the cancelled turn. HARNESS_OK' },
      ],
    },
    {},
    DEFAULT_POLICY,
  );

/** The processes running in the session's container, one `<state> <args>` a line (zombies, already dead, left out). */
async function processes(sessionId: string): Promise<string> {
  const exec = await docker.getContainer(containerName(sessionId)).exec({ Cmd: ['ps', '-eo', 'stat=,args='], AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({ hijack: true, stdin: false });
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  docker.modem.demuxStream(stream, out, new PassThrough());
  await new Promise((resolve) => stream.on('end', resolve));
  return Buffer.concat(chunks)
    .toString('utf8')
    .split('\n')
    .filter((l) => !l.trim().startsWith('Z'))
    .join('\n');
}

/** Sends the message, approves the shell call when the policy asks, and waits until `sleep <n>` runs in the container. */
async function sleeping(sessionId: string, seconds: number): Promise<string> {
  h.declareUsed(config(seconds));
  const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config: config(seconds), text: 'wait a while' });
  await expect
    .poll(
      async () => {
        const s = await sessionState(h.client, sessionId);
        if (s.status === 'waiting_for_approval' && s.pending?.kind === 'approvals') {
          await decideApprovals(h.client, sessionId, { approve: true }).catch(() => undefined);
        }
        return (await processes(sessionId).catch(() => '')).includes(`sleep ${seconds}`);
      },
      { timeout: 60_000, interval: 200 },
    )
    .toBe(true);
  return turnId;
}

const resultOf = async (turnId: string) => (await h.client.workflow.getHandle(turnId).result()) as TurnResult;

describe('harness cancel <turn>', () => {
  it('stops a turn running `sleep 300`: ended cancelled, no process left, trace says cancelled, the session takes the next message', async () => {
    const sessionId = newSessionId('cancel-cli');
    const turnId = await sleeping(sessionId, 300);

    const r = await cli(['cancel', turnId, '--json']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.errLines).toEqual([`turn ${turnId} cancelled`, `session ${sessionId} takes the next message`]);
    expect(parseJson(r)).toEqual({ kind: 'turn', session_id: sessionId, turn_id: turnId, terminated_by: 'cancelled' });

    expect((await resultOf(turnId)).terminated_by).toBe('cancelled');
    // The turn waited for the command to be killed: nothing of it runs once the turn has ended.
    expect(await processes(sessionId)).not.toContain('sleep 300');

    // The trace says so: the turn ended cancelled, and so did its run_shell call.
    const trace = await cli(['trace', turnId]);
    expect(trace.code, describeResult(trace)).toBe(0);
    expect(trace.stdout).toMatch(/turn .*\/turn-1 +ok · cancelled · 1 step/);
    expect(trace.stdout).toMatch(/tool run_shell .*sleep 300.* cancelled \(the turn was cancelled before this call finished\)/);
    const json = await cli(['trace', turnId, '--json']);
    expect(json.code, describeResult(json)).toBe(0);
    const spans = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; name: string; output: Record<string, unknown> | null });
    expect(spans.find((x) => x.type === 'turn')?.output).toMatchObject({ terminated_by: 'cancelled' });
    expect(spans.find((x) => x.type === 'tool_call' && x.name === 'run_shell')?.output).toMatchObject({ cancelled: true, execution: { kind: 'activity' } });

    // The session is idle and takes the next message, which sees the cancelled call.
    const next = await h.finish(sessionId, config(300), 'and now?');
    expect(next).toMatchObject({ terminated_by: 'final_answer', answer: 'Back after the cancelled turn. HARNESS_OK' });
  });

  it('--no-wait during an approval: asks and returns; the turn ends cancelled and its trace says the approval was cancelled, not denied', async () => {
    const sessionId = newSessionId('cancel-approval');
    h.declareUsed(config(303));
    const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config: config(303), text: 'wait a while' });
    // The default policy asks about `sleep`: nobody answers.
    await expect.poll(async () => (await sessionState(h.client, sessionId)).status, { timeout: 30_000, interval: 100 }).toBe('waiting_for_approval');

    const r = await cli(['cancel', turnId, '--no-wait']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.errLines).toEqual([`turn ${turnId} asked to stop`]);
    expect((await resultOf(turnId)).terminated_by).toBe('cancelled');

    const trace = await cli(['trace', turnId]);
    expect(trace.stdout).toMatch(/approval cancelled: the turn was cancelled before anyone decided/);
    expect(trace.stdout).not.toMatch(/denied/);
    const spans = (await cli(['trace', turnId, '--json'])).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; output: Record<string, unknown> | null; error: string | null });
    expect(spans.find((x) => x.type === 'approval')).toMatchObject({ output: { cancelled: true }, error: 'the turn was cancelled before anyone decided' });
  });

  it('refuses ids that name nothing running, in one line with a hint', async () => {
    const sessionId = newSessionId('cancel-bad');
    const done = await h.finish(sessionId, scriptedConfig({ steps: [{ content: 'Done. HARNESS_OK' }] }, {}, DEFAULT_POLICY), 'answer');

    const finished = await cli(['cancel', done.turnId]);
    expect(finished.code, describeResult(finished)).toBe(1);
    expect(finished.errLines).toEqual([
      `error: turn ${done.turnId} has already finished (final_answer); there is nothing to cancel`,
      `hint: see how it went with \`harness trace ${done.turnId}\``,
    ]);

    const noTurn = await cli(['cancel', `${sessionId}/turn-7`]);
    expect(noTurn.code, describeResult(noTurn)).toBe(1);
    expect(noTurn.errLines).toEqual([`error: session ${sessionId} has no turn 7`, `hint: see its turns with \`harness status ${sessionId}\``]);

    const unknown = newSessionId('cancel-none');
    const noSession = await cli(['cancel', unknown]);
    expect(noSession.code, describeResult(noSession)).toBe(1);
    expect(noSession.errLines).toEqual([`error: no session named ${unknown}`, 'hint: list sessions with `harness sessions`; a turn is named <session>/turn-N']);
    const noSessionTurn = await cli(['cancel', `${unknown}/turn-1`]);
    expect(noSessionTurn.errLines).toEqual([`error: no session named ${unknown}, so no turn ${unknown}/turn-1`, 'hint: list sessions with `harness sessions`']);

    const malformed = await cli(['cancel', 'no such/turn-x']);
    expect(malformed.code, describeResult(malformed)).toBe(2);
    expect(malformed.errLines[0]).toMatch(/^error: .*expected a session id/);
  });

  it('--help says what it does', async () => {
    const r = await cli(['cancel', '--help']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout).toMatch(/Usage: harness cancel \[options\] <turn\|session>/);
    expect(r.stdout).toMatch(/run_shell command is killed in\s+the sandbox/);
    expect(r.stdout).toMatch(/harness end/);
  });
});

describe('HarnessClient.cancel()', () => {
  it('cancels a turn from the library: the command is killed, the session goes on', async () => {
    const harness = new HarnessClient(h.client, { taskQueue: h.taskQueue });
    const sessionId = newSessionId('cancel-api');
    const turnId = await sleeping(sessionId, 301);

    await expect(harness.cancel(turnId)).resolves.toEqual({ kind: 'turn', sessionId, turnId, terminatedBy: 'cancelled' });
    expect(await processes(sessionId)).not.toContain('sleep 301');
    expect((await sessionState(h.client, sessionId)).status).toBe('idle');
    const next = await h.finish(sessionId, config(301), 'and now?');
    expect(next.terminated_by).toBe('final_answer');

    // Cancelling it again: it has finished.
    const again = await harness.cancel(turnId).catch((err: unknown) => err);
    expect(again).toBeInstanceOf(UserError);
    expect((again as UserError).message).toBe(`turn ${turnId} has already finished (cancelled); there is nothing to cancel`);
  });

  it('cancels a session: its turn is cancelled, the session ends and its sandbox is removed', async () => {
    const harness = new HarnessClient(h.client, { taskQueue: h.taskQueue });
    const sessionId = newSessionId('cancel-session');
    const turnId = await sleeping(sessionId, 302);

    await expect(harness.cancel(sessionId)).resolves.toEqual({ kind: 'session', sessionId, turnId, terminatedBy: 'cancelled' });
    expect((await resultOf(turnId)).terminated_by).toBe('cancelled');
    const closed = await h.client.workflow.getHandle(sessionId).describe();
    expect(closed.status.name).toBe('COMPLETED');
    // The session's end removed its container, and the command with it.
    const inspected = await docker
      .getContainer(containerName(sessionId))
      .inspect()
      .then(() => 'present', (err: { statusCode?: number }) => err.statusCode);
    expect(inspected).toBe(404);

    const again = await harness.cancel(sessionId).catch((err: unknown) => err);
    expect((again as UserError).message).toBe(`session ${sessionId} has already ended; there is nothing to cancel`);
  });
});
