/**
 * A sub-agent's turn survives its worker: a real worker process (test/support/sub-agent-worker.cjs,
 * built from the package) is SIGKILLed while the sub-agent's tool runs, inside the child turn a
 * call of the parent's started; a new worker takes both turns over. The child is started once
 * (its id is the parent's turn and call), its tool's side effect happens once (a tool that is
 * not idempotent is not run again: the sub-agent reads that it may or may not have taken effect),
 * and the parent gets the sub-agent's answer as the call's result and finishes.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { connectHarness, type HarnessClient } from '../../index';
import { cliEnv } from '../support/cli';
import { adoptHome } from '../../machine/home-mark';
import { TEST_DATABASE_URL } from '../support/harness';
import { kill, ROOT, spawnReady, until } from '../support/processes';

const FIXTURE = path.join(ROOT, 'test', 'support', 'sub-agent-worker.cjs');
const workers: ChildProcess[] = [];
let client: HarnessClient;
let env: NodeJS.ProcessEnv;
let home: string;

async function startWorker(): Promise<ChildProcess> {
  const child = await spawnReady([FIXTURE], { env, cwd: ROOT });
  workers.push(child);
  return child;
}

function script(steps: unknown[]): string {
  const file = path.join(home, `script-${randomUUID()}.json`);
  writeFileSync(file, JSON.stringify({ steps }));
  return file;
}

beforeAll(async () => {
  home = mkdtempSync(path.join(os.tmpdir(), 'harness-sub-agent-crash-'));
  adoptHome(home);
  const taskQueue = `sub-agent-crash-${randomUUID()}`;
  env = cliEnv({
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    HARNESS_TASK_QUEUE: taskQueue,
    HARNESS_HOME: home,
    DATABASE_URL: TEST_DATABASE_URL,
    LEAD_SCRIPT: script([
      { tool_calls: [{ name: 'agent__researcher', arguments: { task: 'Note the fact.' } }] },
      { expect: { last_message_contains: 'Noted once.' }, content: 'The researcher noted it. DONE' },
    ]),
    RESEARCHER_SCRIPT: script([
      { tool_calls: [{ name: 'note_fact', arguments: { fact: 'sky-blue', slow: true } }] },
      { expect: { last_message_contains: 'may or may not have taken effect' }, content: 'Noted once.' },
    ]),
  });
  client = await connectHarness({ env, cwd: home });
});

afterAll(async () => {
  for (const w of workers) await kill(w, 'SIGKILL');
  await client?.close();
});

it("killed while the sub-agent's tool runs: nothing is lost or repeated, and the parent finishes with its answer", async () => {
  const first = await startWorker();
  const sent = await client.send('Have the fact noted.', { agent: 'lead' });
  const notes = path.join(home, 'workspaces', sent.sessionId, 'notes.txt');
  await until("the sub-agent's tool", () => existsSync(notes));
  await kill(first, 'SIGKILL');
  await startWorker();

  const out = await client.wait(sent.turnId, { timeoutMs: 90_000 });
  expect(out.kind).toBe('done');
  if (out.kind !== 'done') return;
  expect(out.result.answer).toContain('DONE');
  expect(out.result.toolCalls.map((c) => [c.name, c.ok])).toEqual([['agent__researcher', true]]);
  // Its side effect happened once, by the worker that was killed.
  expect(readFileSync(notes, 'utf8').trim().split('\n')).toEqual([`t1-s1-c0 sky-blue pid ${first.pid}`]);
  // One child, started once.
  const history = await client.temporal.workflow.getHandle(sent.turnId).fetchHistory();
  const started = (history.events ?? []).filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowType?.name === 'turnWorkflow');
  expect(started.map((e) => e.startChildWorkflowExecutionInitiatedEventAttributes!.workflowId)).toEqual([`${sent.turnId}/agent-t1-s1-c0`]);
  const child = await client.temporal.workflow.getHandle(`${sent.turnId}/agent-t1-s1-c0`).result();
  expect(child).toMatchObject({ terminated_by: 'final_answer', answer: 'Noted once.' });
}, 150_000);
