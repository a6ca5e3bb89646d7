/**
 * A custom tool that is not idempotent is never run twice when its worker is lost: real worker
 * processes (test/support/custom-tool-worker.cjs, built from the package as a user's would be)
 * are SIGKILLed while the tool's code runs, and after it ran and its result was recorded; a new
 * worker takes the call over each time. Under the default policy: the charge asks and is
 * approved before it runs. Its side effect happens once; the model reads either
 * the recorded result or that the call may or may not have taken effect, never a second run.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { connectHarness, type HarnessClient } from '../../index';
import { failpointFile } from '../../activities/failpoints';
import { cliEnv } from '../support/cli';
import { adoptHome } from '../../machine/home-mark';
import { TEST_DATABASE_URL } from '../support/harness';
import { kill, ROOT, spawnReady, until } from '../support/processes';

const FIXTURE = path.join(ROOT, 'test', 'support', 'custom-tool-worker.cjs');
const workers: ChildProcess[] = [];
let client: HarnessClient;
let env: NodeJS.ProcessEnv;
let home: string;

/** Starts the fixture worker and resolves once it polls. */
async function startWorker(extra: Record<string, string> = {}): Promise<ChildProcess> {
  const child = await spawnReady([FIXTURE], { env: { ...env, ...extra }, cwd: ROOT });
  workers.push(child);
  return child;
}


function model(steps: unknown[]): string {
  const file = path.join(home, `script-${randomUUID()}.json`);
  writeFileSync(file, JSON.stringify({ steps }));
  return `scripted:${file}`;
}

beforeAll(async () => {
  home = mkdtempSync(path.join(os.tmpdir(), 'harness-tool-crash-'));
  adoptHome(home); // the test's own folder, where it also writes its scripts
  const taskQueue = `tool-crash-${randomUUID()}`;
  env = cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_TASK_QUEUE: taskQueue, HARNESS_HOME: home, DATABASE_URL: TEST_DATABASE_URL });
  client = await connectHarness({ env, cwd: home });
});

afterAll(async () => {
  for (const w of workers) await kill(w, 'SIGKILL');
  await client?.close();
});

/**
 * Sends the task under the default policy: the charge (a write) asks first, and is approved as
 * a person would, so the kill lands on an approved call.
 */
async function sendApproved(text: string, steps: unknown[]) {
  const sent = await client.send(text, { model: model(steps) });
  const asked = await client.wait(sent.turnId, { timeoutMs: 60_000 });
  if (asked.kind !== 'waiting' || asked.state.pending?.kind !== 'approvals') throw new Error(`the charge should ask first: ${JSON.stringify(asked)}`);
  expect(asked.state.pending.calls.map((c) => c.tool)).toEqual(['charge_card']);
  await client.approve(sent.sessionId);
  return sent;
}

const charges = (sessionId: string) => path.join(home, 'workspaces', sessionId, 'charges.txt');
const lines = (file: string) => readFileSync(file, 'utf8').trim().split('\n');

it('killed while the tool runs: the retry does not run it again and says it may or may not have taken effect', async () => {
  const first = await startWorker();
  const sent = await sendApproved('charge 5 euros', [
    { tool_calls: [{ name: 'charge_card', arguments: { amount: 5, slow: true } }] },
    { expect: { last_message_contains: 'may or may not have taken effect' }, content: 'I cannot tell whether the charge went through. DONE' },
  ]);
  await until('the charge', () => existsSync(charges(sent.sessionId)));
  await kill(first, 'SIGKILL');
  await startWorker();

  const out = await client.wait(sent.turnId, { timeoutMs: 90_000 });
  expect(out.kind).toBe('done');
  if (out.kind !== 'done') return;
  expect(out.result.answer).toContain('DONE');
  expect(out.result.toolCalls.map((c) => [c.name, c.ok, c.error_type])).toEqual([['charge_card', false, 'EXECUTION_ERROR']]);
  expect(lines(charges(sent.sessionId))).toEqual([`t1-s1-c0 5 pid ${first.pid}`]);
  const span = (await client.trace(sent.turnId)).spans.map((s) => s.span).find((s) => s.type === 'tool_call')!;
  expect(span.output).toMatchObject({ ok: false, execution: { kind: 'activity', attempts: 2 } });
  expect(String(span.output!.message)).toMatch(/charge_card was started before \(by .* pid \d+\) and its worker was lost before it finished; it was not run again/);
}, 120_000);

it('killed after the tool ran and its result was recorded: the retry returns that result without running it again', async () => {
  // Only the worker with the failpoint polls (the last test's replacement goes first).
  for (const w of workers.splice(0)) await kill(w);
  const first = await startWorker({ HARNESS_FAILPOINTS: 'after-tool:charge_card=60000' });
  const sent = await sendApproved('charge 7 euros', [
    { tool_calls: [{ name: 'charge_card', arguments: { amount: 7 } }] },
    { expect: { last_message_contains: 'ch-t1-s1-c0' }, content: 'Charged 7 euros. DONE' },
  ]);
  await until('the failpoint after the charge', () => existsSync(failpointFile(home, 'after-tool:charge_card')));
  await kill(first, 'SIGKILL');
  await startWorker();

  const out = await client.wait(sent.turnId, { timeoutMs: 90_000 });
  expect(out.kind).toBe('done');
  if (out.kind !== 'done') return;
  expect(out.result.answer).toContain('Charged 7 euros');
  expect(out.result.toolCalls.map((c) => [c.name, c.ok])).toEqual([['charge_card', true]]);
  expect(lines(charges(sent.sessionId))).toEqual([`t1-s1-c0 7 pid ${first.pid}`]);
}, 120_000);
