/**
 * Crash test: a worker process is SIGKILLed while a model call is in flight; a new worker
 * finishes the turn. The answer is right and no completed step runs again.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inject } from 'vitest';
import { sendMessage, waitForTurn } from '../../lib/session-client';
import { startScriptedModel, type ScriptedModelServer } from '../../scripted/server';
import { endpointConfig, newSessionId } from '../support/harness';
import { kill, spawnWorker } from '../support/processes';
import { cliEnv } from '../support/cli';

let client: Client;
let model: ScriptedModelServer;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  client = new Client({ connection: await Connection.connect({ address: inject('temporalAddress') }) });
  model = await startScriptedModel({
    script: {
      steps: [
        { tool_calls: [{ name: 'write_file', arguments: { path: 'log.txt', content: 'step1\n', append: true } }] },
        {
          // The first request of this step hangs long enough for the test to kill its worker.
          fault: { delay_ms: 60_000 },
          tool_calls: [{ name: 'write_file', arguments: { path: 'log.txt', content: 'step2\n', append: true } }],
        },
        { expect: { last_message_contains: '"ok":true' }, content: 'Both steps done. HARNESS_OK' },
      ],
    },
  });
});

afterAll(async () => {
  for (const w of workers) await kill(w, 'SIGKILL');
  await model?.close();
  await client?.connection.close();
});

it('finishes the turn on a new worker after the first is SIGKILLed mid model call, without redoing completed steps', async () => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'harness-crash-'));
  const env = cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_TASK_QUEUE: `crash-${randomUUID()}`, HARNESS_HOME: home });
  const sessionId = newSessionId('crash');
  const inFlight = new Promise<void>((resolve) => model.onRequest((r) => r.session === sessionId && r.index === 1 && resolve()));

  workers.push(await spawnWorker(env));
  const config = endpointConfig(model.url, { modelHeartbeatMs: 2_000, modelTimeoutMs: 120_000 });
  const { turnId } = await sendMessage(client, { taskQueue: env.HARNESS_TASK_QUEUE!, sessionId, config, text: 'write two lines' });

  await inFlight;
  await kill(workers[0], 'SIGKILL');
  workers.push(await spawnWorker(env));

  const out = await waitForTurn(client, turnId, { pollMs: 200 });
  expect(out.kind).toBe('done');
  if (out.kind !== 'done') return;
  expect(out.result.terminated_by).toBe('final_answer');
  expect(out.result.answer).toContain('HARNESS_OK');

  // Each completed step's side effect happened exactly once.
  expect(readFileSync(path.join(home, 'workspaces', sessionId, 'log.txt'), 'utf8')).toBe('step1\nstep2\n');
  const calls = model.requests.filter((r) => r.session === sessionId);
  expect(calls.filter((r) => r.index === 0)).toHaveLength(1);
  expect(calls.filter((r) => r.index === 1)).toHaveLength(2); // the killed attempt and its retry
  expect(calls.filter((r) => r.index === 2)).toHaveLength(1);

  // History: every activity scheduled once; the in-flight model call completed on attempt 2;
  // the two write_file calls (local activities) left exactly one marker each.
  const history = await client.workflow.getHandle(turnId).fetchHistory();
  const scheduled = history.events!.filter((e) => e.activityTaskScheduledEventAttributes);
  const names = scheduled.map((e) => e.activityTaskScheduledEventAttributes!.activityType!.name);
  expect(names).toEqual(['prepareTurn', 'callModel', 'callModel', 'callModel']);
  const markers = history.events!.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity');
  expect(markers).toHaveLength(2);
  const completed = history.events!.filter((e) => e.activityTaskCompletedEventAttributes);
  expect(completed).toHaveLength(4);
  const replies = completed
    .map((e) => defaultPayloadConverter.fromPayload<{ attempt?: number }>(e.activityTaskCompletedEventAttributes!.result!.payloads![0]!))
    .filter((r) => r && typeof r.attempt === 'number');
  expect(replies.map((r) => r.attempt)).toEqual([1, 2, 1]);
}, 120_000);
