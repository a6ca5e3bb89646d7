/**
 * `harness sessions` after `harness retry`: a turn whose model call was refused and was retried
 * successfully is shown as the retry left it (idle, its last turn a final answer, the tokens of
 * the whole retried turn, as the session's own state says), not as "idle (last turn: failed)"
 * with the failed run's tokens. Under the default policy, through the CLI as a user runs it.
 */
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startScriptedModel, type ScriptedModelServer } from '../../scripted-model/server';
import type { Script } from '../../scripted-model/script';
import { sessionState } from '../../client/session-client';
import type { SessionRow } from '../../client/session-list';
import { DEFAULT_POLICY, endpointConfig, newSessionId, startHarness, type TestHarness } from '../support/harness';
import { cliEnv, describeResult, parseJson, removeTempDirs, runCli, tempDir } from '../support/cli';

let h: TestHarness;
let server: ScriptedModelServer;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  h = await startHarness();
  server = await startScriptedModel();
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(tempDir('harness-cli-sessions-retry-'), 'home') });
}, 60_000);
afterAll(async () => {
  await server?.close();
  await h?.stop();
  removeTempDirs();
});

/** The session's row of `harness sessions --json`, and its line in the text list. */
async function listed(sessionId: string): Promise<{ row: SessionRow; line: string }> {
  const json = await runCli(['sessions', '--json'], { env, timeoutMs: 60_000 });
  expect(json.code, describeResult(json)).toBe(0);
  const row = parseJson<SessionRow[]>(json).find((r) => r.session_id === sessionId);
  expect(row, describeResult(json)).toBeDefined();
  const text = await runCli(['sessions'], { env, timeoutMs: 60_000 });
  expect(text.code, describeResult(text)).toBe(0);
  const line = text.stdout.split('\n').find((l) => l.startsWith(`${sessionId}\t`));
  expect(line, describeResult(text)).toBeDefined();
  return { row: row!, line: line! };
}

it('a successfully retried turn is listed with the retry’s outcome and tokens', async () => {
  const sessionId = newSessionId('sessions-retry');
  const script: Script = {
    steps: [
      { tool_calls: [{ name: 'get_current_time', arguments: {} }] },
      // The endpoint refuses the first request for good (the turn fails); the retry's request answers.
      { fault: { status: 401, times: 1, message: 'the key was rotated' }, content: 'Recovered after the refusal. HARNESS_OK' },
    ],
  };
  server.registerScript(sessionId, script);
  const failed = await h.finish(sessionId, endpointConfig(server.url, {}, DEFAULT_POLICY), 'tell the time, then answer');
  expect(failed.terminated_by).toBe('failed');

  const before = await listed(sessionId);
  expect(before.row).toMatchObject({ state: 'idle', last_outcome: 'failed', turns: 1 });
  expect(before.line).toContain('idle (last turn: failed)');

  const r = await runCli(['retry', failed.turnId, '--json'], { env, timeoutMs: 120_000 });
  expect(r.code, describeResult(r)).toBe(0);
  expect(parseJson(r)).toMatchObject({ terminated_by: 'final_answer' });
  // The session adopts the retried run's result once that run has ended.
  await expect.poll(async () => (await sessionState(h.client, sessionId)).lastTurn?.terminated_by, { timeout: 30_000 }).toBe('final_answer');
  const state = await sessionState(h.client, sessionId);

  const after = await listed(sessionId);
  expect(after.row).toMatchObject({ state: 'idle', last_outcome: 'final_answer', turns: 1 });
  expect(after.row.usage).toEqual(state.usage);
  expect(after.row.usage.total_tokens).toBeGreaterThan(before.row.usage.total_tokens);
  expect(after.line).not.toContain('last turn: failed');
  expect(after.line).toMatch(new RegExp(`^${sessionId}\\tidle\\t1 turn\\(s\\)\\t${state.usage.total_tokens} tokens\\t`));
}, 240_000);
