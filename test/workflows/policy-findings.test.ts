// The security review's findings through real turns: the default policy (mode ask),
// a real worker, the real Docker sandbox. Nothing runs unasked; the commands that crashed or
// stalled workers are judged quickly, by this worker and by a second one that replays the turn.
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxPool } from '../../activities/sandbox/pool';
import { removeOrphans } from '../../activities/sandbox/containers';
import type { PendingApproval, TurnState } from '../../deterministic/session-state';
import type { SessionConfig } from '../../deterministic/session-config';
import type { ChatMessage, ToolResult } from '../../deterministic/types';
import { decideApprovals } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import type { TurnOutcome } from '../../client/turn-wait';
import { DEFAULT_POLICY, newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';

const docker = new Docker();
let home: string;
let h: TestHarness;

beforeAll(async () => {
  home = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'harness-findings-')));
  h = await startHarness({ home, sandboxes: new SandboxPool({ home }) });
});

afterAll(async () => {
  await h?.stop();
  if (home) {
    await removeOrphans(docker, [], { home }).catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
  }
});

function workspace(sessionId: string): string {
  return path.join(home, 'workspaces', sessionId);
}

/** Files in the session's workspace before its first turn, owned by the sandbox user as its own would be. */
function seed(sessionId: string, files: Record<string, string>): void {
  const dir = workspace(sessionId);
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) {
    writeFileSync(path.join(dir, name), text);
    chownSync(path.join(dir, name), 1000, 1000);
  }
  chownSync(dir, 1000, 1000);
}

/** One model step per command, then a final answer. */
function commandsThenAnswer(commands: string[]): SessionConfig {
  return scriptedConfig(
    { steps: [...commands.map((command) => ({ tool_calls: [{ name: 'run_shell', arguments: { command } }] })), { content: 'Done. HARNESS_OK' }] },
    {},
    DEFAULT_POLICY,
  );
}

/** The call a waiting turn asks about (exactly one). */
function asked(out: TurnOutcome): { state: TurnState; call: PendingApproval } {
  expect(out.kind).toBe('waiting');
  const state = (out as { state: TurnState }).state;
  expect(state.pending?.kind).toBe('approvals');
  const calls = (state.pending as { calls: PendingApproval[] }).calls;
  expect(calls).toHaveLength(1);
  return { state, call: calls[0]! };
}

async function decide(
  sessionId: string,
  state: TurnState,
  call: PendingApproval,
  approve: boolean,
  extra: { always?: boolean; pattern?: string } = {},
  on: TestHarness = h,
) {
  const r = await decideApprovals(on.client, sessionId, {
    calls: [{ callId: call.callId, digest: call.digest ?? '' }],
    approve,
    ...(approve ? extra : { reason: 'not this' }),
  });
  return { granted: r.granted, out: await waitForTurn(on.client, state.turnId, { pollMs: 100 }) };
}

function toolResults(messages: ChatMessage[]): ToolResult[] {
  return messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content) as ToolResult);
}

/** Whether any workflow task of the turn failed or timed out (a worker crash or a stalled judgement). */
async function taskTrouble(turnId: string, on: TestHarness = h, stoppedAt?: number): Promise<string[]> {
  const history = await on.client.workflow.getHandle(turnId).fetchHistory();
  const events = history.events ?? [];
  const startedAt = (id: unknown) => {
    const e = events.find((x) => String(x.eventId) === String(id));
    return e?.eventTime ? Number(e.eventTime.seconds) * 1000 + (e.eventTime.nanos ?? 0) / 1e6 : NaN;
  };
  // Temporal's handover, not trouble:
  // - a task that waited on a stopped worker's sticky queue and moved to the shared one (a
  //   schedule-to-start timeout, type 2): the stopped worker's goodbye can be lost under load;
  // - a task the stopped worker had taken before it stopped and never finished (a start-to-close
  //   timeout of a task started before `stoppedAt`): the turn's own signal to its session wakes
  //   it once more, and that task can reach the worker as it stops.
  // A task that failed, or ran out of time on a worker still running, is trouble.
  const handover = (t: NonNullable<(typeof events)[number]['workflowTaskTimedOutEventAttributes']>) =>
    ['2', 'TIMEOUT_TYPE_SCHEDULE_TO_START'].includes(String(t.timeoutType)) || (stoppedAt !== undefined && startedAt(t.startedEventId) <= stoppedAt);
  return events
    .filter((e) => e.workflowTaskFailedEventAttributes || (e.workflowTaskTimedOutEventAttributes && !handover(e.workflowTaskTimedOutEventAttributes)))
    .map((e) => JSON.stringify(e.workflowTaskFailedEventAttributes?.failure?.message ?? `timed out (type ${e.workflowTaskTimedOutEventAttributes?.timeoutType})`));
}

describe('the review findings, under the default policy in real turns', () => {
  it('finding 1: commands run with the bash the policy parses, so an ANSI-C string hides nothing', async () => {
    const sessionId = newSessionId('f1');
    seed(sessionId, { 'victim.txt': 'keep me\n' });
    const hidden = `echo $'\\' ; touch pwned ; #\\''`;
    const config = commandsThenAnswer([hidden, '[[ x > victim.txt ]]', hidden]);

    // Asked, not allowed: the policy does not read ANSI-C escapes itself.
    const first = asked(await h.turn(sessionId, config, 'go'));
    expect(first.call.reason).toMatch(/ANSI-C string with escapes/);
    const second = asked((await decide(sessionId, first.state, first.call, false)).out);
    expect(second.call.reason).toMatch(/`\[\[ … \]\]` conditional expression/);
    const third = asked((await decide(sessionId, second.state, second.call, false)).out);
    expect(existsSync(path.join(workspace(sessionId), 'pwned'))).toBe(false);
    expect(readFileSync(path.join(workspace(sessionId), 'victim.txt'), 'utf8')).toBe('keep me\n');

    // Approved, it runs as bash reads it: one echo, no touch (dash ran `touch`).
    const done = (await decide(sessionId, third.state, third.call, true)).out;
    expect(done.kind).toBe('done');
    const result = done.kind === 'done' ? await h.complete(done.result) : undefined;
    const shell = toolResults(result!.messages!).at(-1)!;
    expect(shell).toMatchObject({ ok: true, result: { exit_code: 0, stdout: "' ; touch pwned ; #'\n" } });
    expect(existsSync(path.join(workspace(sessionId), 'pwned'))).toBe(false);
    expect(result!.terminated_by).toBe('final_answer');
  });

  it('finding 2: sed labels end at whitespace, so `:x w` and `v … e` ask and write nothing', async () => {
    const sessionId = newSessionId('f2');
    seed(sessionId, { f: 'hello\n' });
    const config = commandsThenAnswer(["sed -n ':x w out.txt' f", "sed -n 'v 4.2 e touch p' f"]);
    const first = asked(await h.turn(sessionId, config, 'go'));
    expect(first.call.reason).toMatch(/the sed command `w` writes a file/);
    const second = asked((await decide(sessionId, first.state, first.call, false)).out);
    expect(second.call.reason).toMatch(/the sed command `e` runs a command/);
    const done = (await decide(sessionId, second.state, second.call, false)).out;
    expect(done.kind).toBe('done');
    expect(existsSync(path.join(workspace(sessionId), 'out.txt'))).toBe(false);
    expect(existsSync(path.join(workspace(sessionId), 'p'))).toBe(false);
  });

  it('the fuzzer\'s finding: a process substitution joined to a `#` hides nothing, it asks and, denied, runs nothing', async () => {
    const sessionId = newSessionId('fz');
    seed(sessionId, { f: 'hello\n' });
    const config = commandsThenAnswer(['diff <(ls)#<(touch pwned)']);
    const first = asked(await h.turn(sessionId, config, 'go'));
    expect(first.call.reason).toMatch(/a process substitution joined to other text in one word/);
    const done = (await decide(sessionId, first.state, first.call, false)).out;
    expect(done.kind).toBe('done');
    expect(existsSync(path.join(workspace(sessionId), 'pwned'))).toBe(false);
  });

  it('findings 3 and 4: wrapper chains of any length ask at once; this worker and a second one replaying the turn survive', async () => {
    const sessionId = newSessionId('f3');
    const chain = `${'nice '.repeat(6_550)}ls`;
    const envs = `${'env -u X '.repeat(3_600)}ls`;
    const config = commandsThenAnswer([chain, envs]);
    // A worker of its own, so that the test can stop it while the turn waits.
    const first = await startHarness({ home, sandboxes: new SandboxPool({ home }) });
    let second: TestHarness | undefined;
    try {
      const waiting = asked(await first.turn(sessionId, config, 'go'));
      expect(waiting.call.reason).toMatch(/more than 8 programs run one another/);
      await first.stop();
      const stoppedAt = Date.now();
      // A second worker on the same queue takes the turn over: it replays the judgement first.
      second = await startHarness({ home, taskQueue: first.taskQueue, sandboxes: new SandboxPool({ home }) });
      const next = asked((await decide(sessionId, waiting.state, waiting.call, false, {}, second)).out);
      expect(next.call.reason).toMatch(/more than 8 programs run one another/);
      const done = (await decide(sessionId, next.state, next.call, false, {}, second)).out;
      expect(done.kind === 'done' && done.result.terminated_by).toBe('final_answer');
      expect(await taskTrouble(waiting.state.turnId, second, stoppedAt)).toEqual([]);
    } finally {
      await second?.stop();
    }
  });

  it('finding 6: --always grants exactly the command shown, says so, and a different command asks again', async () => {
    const sessionId = newSessionId('f6');
    seed(sessionId, { 'a.tmp': 'x', 'keep.txt': 'keep\n' });
    const config = commandsThenAnswer(["find . -name '*.tmp' -delete", "find . -name '*.tmp' -delete", 'find . -delete']);
    const first = asked(await h.turn(sessionId, config, 'go'));
    const { granted, out } = await decide(sessionId, first.state, first.call, true, { always: true });
    expect(granted).toEqual(["run_shell exactly `find . -name '*.tmp' -delete`"]);
    expect(existsSync(path.join(workspace(sessionId), 'a.tmp'))).toBe(false);
    // The same command again ran without asking; the broader one asks.
    const broader = asked(out);
    expect(broader.call.args).toEqual({ command: 'find . -delete' });
    const done = (await decide(sessionId, broader.state, broader.call, false)).out;
    expect(done.kind).toBe('done');
    expect(readFileSync(path.join(workspace(sessionId), 'keep.txt'), 'utf8')).toBe('keep\n');
  });

  it('finding 6: a pattern the person typed grants programs starting with those words, and nothing else', async () => {
    const sessionId = newSessionId('f6p');
    const config = commandsThenAnswer(['touch a.txt', 'touch -m b.txt', 'mkdir sub']);
    const first = asked(await h.turn(sessionId, config, 'go'));
    await expect(decideApprovals(h.client, sessionId, { calls: [{ callId: first.call.callId, digest: first.call.digest ?? '' }], approve: true, always: true, pattern: 'rm' }))
      .rejects.toThrow(/matches no program of the command/);
    const { granted, out } = await decide(sessionId, first.state, first.call, true, { always: true, pattern: 'touch' });
    expect(granted).toEqual(['run_shell commands starting `touch`']);
    const next = asked(out);
    expect(next.call.args).toEqual({ command: 'mkdir sub' });
    await decide(sessionId, next.state, next.call, false);
    expect(existsSync(path.join(workspace(sessionId), 'b.txt'))).toBe(true);
    expect(existsSync(path.join(workspace(sessionId), 'sub'))).toBe(false);
  });
});
