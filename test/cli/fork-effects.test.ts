/**
 * `harness fork` never repeats an effect outside the sandbox unasked, under the default policy.
 * The source session's first turn called a real MCP server, a loopback HTTP server and a custom
 * tool, approved with --always; its second turn called them again twice, allowed by those
 * grants. A fork of the second turn at step 2 takes step 1 from the record (none of its calls
 * reaches a server again), and its own calls of the three are asked about like any new call: the
 * source's grants for tools that leave the sandbox are not carried over, and it says so.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decideApprovals } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { newSessionId } from '../support/harness';
import { cliEnv, describeResult, parseJson, removeTempDirs, runCli, tempDir } from '../support/cli';
import { approveAll, startOutsideWorld, type OutsideWorld } from '../support/outside-effects';

let w: OutsideWorld;
let env: NodeJS.ProcessEnv;
let source: string;
const cli = (args: string[]) => runCli(['fork', ...args], { env, timeoutMs: 120_000 });

beforeAll(async () => {
  w = await startOutsideWorld();
  env = cliEnv({ TEMPORAL_ADDRESS: w.h.address, HARNESS_TASK_QUEUE: w.h.taskQueue, HARNESS_HOME: path.join(tempDir('harness-cli-fork-effects-'), 'home') });
  source = newSessionId('fork-fx');
  w.model.registerScript(source, {
    steps: [
      // Turn 1 (model calls 0–1): approved with --always.
      { tool_calls: w.calls('first') },
      { content: 'Sent, requested and ordered.' },
      // Turn 2 (model calls 2–4): the grants allow both steps' calls without asking.
      { tool_calls: w.calls('second') },
      { tool_calls: w.calls('third') },
      { content: 'Again, twice.' },
    ],
  });
  const first = await approveAll(w.h, source, await w.h.turn(source, w.config, 'send, request, order'), true);
  expect(first.terminated_by).toBe('final_answer');
  const second = await w.h.turn(source, w.config, 'do it again, twice');
  expect(second).toMatchObject({ kind: 'done', result: { terminated_by: 'final_answer' } });
  expect(await w.take()).toEqual({ mcp: 3, http: 3, custom: 3 });
}, 180_000);
afterAll(async () => {
  await w?.stop();
  removeTempDirs();
});

describe('harness fork and calls that leave the sandbox', () => {
  it('repeats none of the steps before the fork, and asks about its own calls: the source\'s grants for them do not carry over', async () => {
    const fork = newSessionId('fork-fx-f');
    // The fork's model calls are numbered on from the recorded ones: its first is index 3.
    w.model.registerScript(fork, { steps: [...Array.from({ length: 3 }, () => ({ content: 'never asked' })), { tool_calls: w.calls('fork') }, { content: 'The fork is done.' }] });
    const r = await cli([`${source}/turn-2`, '--at-step', '2', '--session', fork, '--json']);
    expect(r.code, describeResult(r)).toBe(3);
    expect(r.errLines).toContain(
      "not carried over: the source session's --always grants for mcp__counter__send, http_request (127.0.0.1), send_order: calls that leave the sandbox are judged by the policy afresh",
    );
    const waiting = parseJson<{ pending: { calls: { tool: string }[] } }>(r);
    expect(waiting.pending.calls.map((c) => c.tool)).toEqual(['mcp__counter__send', 'http_request', 'send_order']);
    // Step 1's calls are the copied conversation; the fork's own are waiting for a person.
    expect(await w.take()).toEqual({ mcp: 0, http: 0, custom: 0 });

    await decideApprovals(w.h.client, fork, { approve: true });
    const done = await waitForTurn(w.h.client, `${fork}/turn-1`, { pollMs: 100 });
    expect(done).toMatchObject({ kind: 'done', result: { terminated_by: 'final_answer', answer: 'The fork is done.' } });
    expect(await w.take()).toEqual({ mcp: 1, http: 1, custom: 1 });
  }, 180_000);
});
