/**
 * `harness retry` as a user runs it, under the default policy: a turn that failed on a model
 * outage goes on from the failed step with its earlier model calls and tool executions taken
 * from history (counted on the scripted server and in the workspace), the session adopts the
 * result, and a terminated turn waiting for approval waits again. Turns that cannot be retried
 * get one line and a hint.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedModel, type ScriptedModelServer } from '../../scripted-model/server';
import type { Script } from '../../scripted-model/script';
import { sessionState } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { followEval, startEval } from '../../evals/runner/run';
import { withStoredRuns } from '../../activities/eval-keep';
import { parseSuite } from '../../evals/runner/suite';
import { DEFAULT_POLICY, endpointConfig, newSessionId, startHarness, type TestHarness } from '../support/harness';
import { cliEnv, describeResult, parseJson, removeTempDirs, runCli, stackLines, tempDir } from '../support/cli';

let h: TestHarness;
let server: ScriptedModelServer;
let env: NodeJS.ProcessEnv;
const cli = (args: string[]) => runCli(['retry', ...args], { env, timeoutMs: 120_000 });

beforeAll(async () => {
  h = await startHarness();
  server = await startScriptedModel();
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(tempDir('harness-cli-retry-'), 'home') });
}, 60_000);
afterAll(async () => {
  await server?.close();
  await h?.stop();
  removeTempDirs();
});

const requestsOf = (sessionId: string) => server.requests.filter((q) => q.session === sessionId && q.purpose !== 'compress').map((q) => [q.index, q.status]);

describe('harness retry', () => {
  it('continues a turn that failed on a model outage from the failed step, repeating no earlier call', async () => {
    const sessionId = newSessionId('retry');
    const script: Script = {
      steps: [
        { tool_calls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'first\n' } }] },
        { tool_calls: [{ name: 'run_shell', arguments: { command: 'echo ran >> runs.txt' } }] },
        // The endpoint is down for both attempts the turn allows; the third request answers.
        { fault: { status: 503, times: 2 }, content: 'Recovered after the outage. HARNESS_OK' },
        { expect: { messages_contain: 'Recovered after the outage' }, content: 'The second turn sees the first. HARNESS_OK' },
      ],
    };
    server.registerScript(sessionId, script);
    const config = endpointConfig(server.url, { modelMaxAttempts: 2, modelRetryWindowMs: 0 }, DEFAULT_POLICY);
    const failed = await h.finishApproving(sessionId, config, 'write notes, run a command, then answer');
    expect(failed.terminated_by).toBe('failed');
    expect(failed.asked).toHaveLength(2);
    expect(requestsOf(sessionId)).toEqual([[0, 200], [1, 200], [2, 503], [2, 503]]);

    const r = await cli([failed.turnId, '--json']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.errLines[0]).toMatch(/^retrying .*\/turn-1 from step 3 \(its model call failed: .*503.*\); steps 1–2 kept from history \(2 model calls and 2 tool calls not repeated\)$/);
    const result = parseJson(r);
    expect(result).toMatchObject({ terminated_by: 'final_answer', answer: 'Recovered after the outage. HARNESS_OK', steps: 3 });

    // Steps 1 and 2 were asked of the model once; their tools ran once (no approval asked again).
    expect(requestsOf(sessionId)).toEqual([[0, 200], [1, 200], [2, 503], [2, 503], [2, 200]]);
    const ws = path.join(h.home, 'workspaces', sessionId);
    expect(readFileSync(path.join(ws, 'runs.txt'), 'utf8')).toBe('ran\n');
    expect(readFileSync(path.join(ws, 'notes.txt'), 'utf8')).toBe('first\n');

    // The session adopted the retried result: idle, and its next turn carries the conversation on.
    await expect.poll(async () => (await sessionState(h.client, sessionId)).lastTurn?.terminated_by, { timeout: 20_000 }).toBe('final_answer');
    const next = await h.finish(sessionId, config, 'and now?');
    expect(next.answer).toBe('The second turn sees the first. HARNESS_OK');
    expect(requestsOf(sessionId).at(-1)).toEqual([3, 200]);

    // The trace tells the turn once, from the reset run, and says it was retried.
    const trace = await runCli(['trace', failed.turnId, '--json'], { env, timeoutMs: 60_000 });
    expect(trace.code, describeResult(trace)).toBe(0);
    const spans = trace.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; status: string });
    expect(spans.filter((s) => s.type === 'step')).toHaveLength(3);
    expect(spans.filter((s) => s.type === 'llm_call').map((s) => s.status)).toEqual(['ok', 'ok', 'ok']);
    expect(trace.errLines.join('\n')).toMatch(/was retried/);

    // Done turns are not retried: one line, and the way to try another path.
    const again = await cli([failed.turnId]);
    expect(again.code).toBe(1);
    expect(again.errLines).toEqual([
      expect.stringMatching(/^error: turn .*\/turn-1 ended with final_answer, not a failure: there is nothing to retry$/),
      expect.stringMatching(/^hint: .*harness fork .*--at-step N/),
    ]);
  }, 180_000);

  it('a terminated turn waiting for approval goes back to waiting; approved, it finishes', async () => {
    const sessionId = newSessionId('retry-term');
    server.registerScript(sessionId, {
      steps: [
        { tool_calls: [{ name: 'get_current_time', arguments: {} }] },
        { tool_calls: [{ name: 'run_shell', arguments: { command: 'echo approved >> approved.txt' } }] },
        { content: 'Done after the retry. HARNESS_OK' },
      ],
    });
    const config = endpointConfig(server.url, {}, DEFAULT_POLICY);
    const out = await h.turn(sessionId, config, 'tell the time, then write a file');
    expect(out.kind).toBe('waiting');
    const turnId = out.kind === 'waiting' ? out.state.turnId : '';
    await h.client.workflow.getHandle(turnId).terminate('an operator stopped it');
    await expect.poll(async () => (await sessionState(h.client, sessionId)).lastTurn?.terminated_by, { timeout: 20_000 }).toBe('failed');

    const r = await cli([turnId, '--no-wait', '--json']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(parseJson(r)).toMatchObject({ turn_id: turnId, step: 2, kept: { steps: 1, modelCalls: 1, toolCalls: 1 } });
    expect(r.errLines[0]).toMatch(/it was terminated: an operator stopped it/);

    const waiting = await waitForTurn(h.client, turnId, { pollMs: 100 });
    expect(waiting.kind).toBe('waiting');
    await expect.poll(async () => (await sessionState(h.client, sessionId)).status, { timeout: 20_000 }).toBe('waiting_for_approval');
    // Named: this CLI user was shown nothing (the turn was started through the library).
    const approve = await runCli(['approve', sessionId, 't1-s2-c0'], { env, timeoutMs: 120_000 });
    expect(approve.code, describeResult(approve)).toBe(0);
    expect(approve.stdout).toContain('Done after the retry. HARNESS_OK');
    // The model was asked for step 2 once before the termination; the reset run asks it again
    // only for what the reset point did not keep (the call in flight) and step 3.
    expect(requestsOf(sessionId).map(([i]) => i)).toEqual([0, 1, 2]);
    expect(readFileSync(path.join(h.home, 'workspaces', sessionId, 'approved.txt'), 'utf8')).toBe('approved\n');
  }, 180_000);

  it("retries an eval trial's failed turn on its own (the eval is no session to take it back)", async () => {
    const evalId = newSessionId('retry-eval');
    const suite = parseSuite(JSON.stringify({ id: 'down', input: 'Answer me.', checks: [{ type: 'contains', value: 'HARNESS_OK' }] }), 'down.jsonl');
    const trial = `${evalId}-down-t1`;
    server.registerScript(trial, { steps: [{ fault: { status: 503, times: 2 }, content: 'Answered after the outage. HARNESS_OK' }] });
    const config = endpointConfig(server.url, { modelMaxAttempts: 2, modelRetryWindowMs: 0 }, DEFAULT_POLICY);
    await startEval(h.client, h.taskQueue, suite, { concurrency: 1, trials: 1, config, model: 'scripted-endpoint', scriptedPerCase: false }, evalId);
    // The trial reports are in the store: read back as `harness eval` reads them.
    const report = await followEval(h.client, evalId, () => undefined, 500, undefined, (r) => withStoredRuns(r, h.store.evalTrials!()));
    expect(report.cases[0]!.runs[0]).toMatchObject({ passed: false, terminated_by: 'failed', workflow_id: `${trial}/turn-1` });

    const r = await cli([`${trial}/turn-1`, '--json']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.errLines[0]).toMatch(/^retrying \S+\/turn-1 from step 1 \(its model call failed: .*503.*\)/);
    expect(parseJson(r)).toMatchObject({ terminated_by: 'final_answer', answer: 'Answered after the outage. HARNESS_OK' });
    expect(stackLines(r.stderr)).toEqual([]);
  }, 180_000);

  it('refuses what cannot be retried in one line, without a stack', async () => {
    const bad = await cli(['not a turn']);
    expect(bad.code).toBe(2);
    expect(stackLines(bad.stderr)).toEqual([]);
    const unknown = await cli([`${newSessionId('nope')}/turn-1`]);
    expect(unknown.code).toBe(1);
    expect(unknown.errLines[0]).toMatch(/^error: no turn .* in Temporal$/);
    expect(stackLines(unknown.stderr)).toEqual([]);
  }, 60_000);
  it('a turn that fails under `harness run` says so and names `harness retry` in its hint', async () => {
    const dir = tempDir('harness-cli-retry-hint-');
    const script = path.join(dir, 'down.json');
    writeFileSync(script, JSON.stringify({ steps: [{ fault: { status: 503, times: 10 }, content: 'never' }] }));
    const config = path.join(dir, 'harness.config.json');
    writeFileSync(config, JSON.stringify({ limits: { modelMaxAttempts: 1, modelRetryWindowSec: 0 } }));
    const r = await runCli(['run', '--model', `scripted:${script}`, '--config', config, 'answer me'], { env, cwd: dir, timeoutMs: 120_000 });
    expect(r.code, describeResult(r)).toBe(1);
    const hint = r.errLines.find((l) => l.startsWith('hint: '));
    expect(hint, describeResult(r)).toMatch(/^hint: once the cause is fixed \(see `harness trace (\S+\/turn-1)`\), continue the turn from its last good step with `harness retry \1`/);
    expect(stackLines(r.stderr)).toEqual([]);
  });
});
