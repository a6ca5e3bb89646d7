/**
 * HarnessClient.pending() and `harness pending`: everything waiting on a person across sessions
 * and task queues. Two workers on two task queues each run a session that waits for approval of
 * a custom tool's call, and one of them a session that asks a question; a client of a third task
 * queue lists all three, and deciding each by its id lets every session finish.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectHarness, createHarnessWorker, type HarnessClient, type HarnessWorker, type PendingApprovalItem, type PendingItem } from '../../index';
import { quietRuntime } from '../support/quiet-runtime';
import { shipParcel } from '../support/ship-tool';
import { TEST_DATABASE_URL } from '../support/harness';
import { cliEnv, parseJson, removeTempDirs, runCli } from '../support/cli';


const env = () => ({ PATH: process.env.PATH, TEMPORAL_ADDRESS: inject('temporalAddress'), DATABASE_URL: TEST_DATABASE_URL });
const tmp = (prefix: string) => mkdtempSync(path.join(os.tmpdir(), prefix));
const script = (steps: unknown[]) => {
  const file = path.join(tmp('harness-pending-script-'), 'script.json');
  writeFileSync(file, JSON.stringify({ steps }));
  return `scripted:${file}`;
};

const queues = [`pending-a-${randomUUID()}`, `pending-b-${randomUUID()}`];
const workers: Array<{ w: HarnessWorker; running: Promise<void> }> = [];
const clients: HarnessClient[] = [];
let reader: HarnessClient;

beforeAll(async () => {
  quietRuntime();
  for (const taskQueue of queues) {
    const w = await createHarnessWorker({ tools: [shipParcel], env: env(), taskQueue, home: tmp('harness-pending-home-'), log: () => undefined, bundlePath: inject('workflowBundle') });
    workers.push({ w, running: w.run() });
    clients.push(await connectHarness({ env: env(), taskQueue, cwd: tmp('harness-pending-cwd-') }));
  }
  // A client of a task queue no session here runs on: pending() reads every queue.
  reader = await connectHarness({ env: env(), taskQueue: `pending-elsewhere-${randomUUID()}`, cwd: tmp('harness-pending-cwd-') });
});

afterAll(async () => {
  for (const { w, running } of workers) {
    w.shutdown();
    await running.catch(() => undefined);
  }
  for (const c of [...clients, reader]) await c?.close();
  removeTempDirs();
});

describe('pending()', () => {
  it('lists approvals and questions of sessions on two task queues; deciding each by its id lets every session finish', async () => {
    const shipTo = (to: string) => script([{ tool_calls: [{ name: 'ship_parcel', arguments: { to } }] }, { expect: { last_message_contains: to }, content: `Shipped to ${to}. DONE` }]);
    const a = await clients[0]!.run('ship to Oslo', { model: shipTo('Oslo') });
    const b = await clients[1]!.run('ship to Lima', { model: shipTo('Lima') });
    const q = await clients[0]!.run('ask me', {
      model: script([{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }] }, { expect: { last_message_contains: 'teal' }, content: 'Teal it is. DONE' }]),
    });
    for (const out of [a, b, q]) expect(out.kind).toBe('waiting');
    const ours = new Set([a.sessionId, b.sessionId, q.sessionId]);

    // Visibility and the sessions' signals arrive within moments of the waits.
    let items: PendingItem[] = [];
    await expect
      .poll(async () => (items = (await reader.pending()).filter((i) => ours.has(i.sessionId))).length, { timeout: 20_000, interval: 200 })
      .toBe(3);
    const byId = new Map(items.map((i) => [i.sessionId, i]));
    expect(byId.get(a.sessionId)).toMatchObject({ kind: 'approval', turnId: a.turnId, tool: 'ship_parcel', args: { to: 'Oslo' }, risk: 'write', taskQueue: queues[0] });
    expect(byId.get(b.sessionId)).toMatchObject({ kind: 'approval', turnId: b.turnId, tool: 'ship_parcel', args: { to: 'Lima' }, risk: 'write', taskQueue: queues[1] });
    expect(byId.get(q.sessionId)).toMatchObject({ kind: 'question', turnId: q.turnId, question: 'Which colour?', taskQueue: queues[0] });
    for (const i of items) expect(Date.parse(i.since)).toBeGreaterThan(0);
    // Only one task queue's when asked so.
    expect((await reader.pending({ taskQueue: queues[1] })).filter((i) => ours.has(i.sessionId)).map((i) => i.sessionId)).toEqual([b.sessionId]);

    // The CLI lists the same, as snake_case JSON.
    const cli = await runCli(['pending', '--json'], { env: cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_HOME: tmp('harness-pending-cli-') }) });
    expect(cli.code).toBe(0);
    const listed = parseJson<Array<Record<string, unknown>>>(cli).filter((i) => ours.has(i.session_id as string));
    expect(listed).toHaveLength(3);
    const lima = byId.get(b.sessionId) as PendingApprovalItem;
    expect(listed.find((i) => i.session_id === b.sessionId)).toMatchObject({ kind: 'approval', turn_id: b.turnId, call_id: lima.callId, task_queue: queues[1], args: { to: 'Lima' } });

    const lines = await runCli(['pending', '--task-queue', queues[1]!], { env: cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_HOME: tmp('harness-pending-cli-') }) });
    expect(lines.code).toBe(0);
    expect(lines.stdout).toContain(`${b.sessionId}\tapproval ${lima.callId}\tship_parcel {"to":"Lima"}\ttask queue ${queues[1]}\tasked `);
    expect(lines.stdout).not.toContain(a.sessionId);
    expect(lines.errLines.at(-1)).toMatch(/^decide: `harness approve <session> <call id>`/);

    // Each decided by its id, from the reader (the sessions' own task queues play no part).
    for (const item of items) {
      const { turnId } =
        item.kind === 'approval' ? await reader.approve(item.sessionId, { callIds: [item.callId] }) : await reader.answer(item.sessionId, 'teal', { questionId: item.questionId });
      const done = await reader.wait(turnId);
      expect(done.kind).toBe('done');
      if (done.kind === 'done') expect(done.result.answer).toContain('DONE');
    }
    await expect.poll(async () => (await reader.pending()).filter((i) => ours.has(i.sessionId)).length, { timeout: 20_000, interval: 200 }).toBe(0);
  }, 120_000);

  it('refuses an answer naming a question that is not the one waiting', async () => {
    const q = await clients[1]!.run('ask me', {
      model: script([{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Which size?' } }] }, { content: 'Large. DONE' }]),
    });
    expect(q.kind).toBe('waiting');
    await expect(reader.answer(q.sessionId, 'large', { questionId: 'not-this-one' })).rejects.toThrow(/refused the request: no pending question has call id not-this-one/);
    const pendingNow = (await reader.status(q.sessionId)).pending;
    expect(pendingNow?.kind).toBe('question');
    if (pendingNow?.kind !== 'question') return;
    const { turnId } = await reader.answer(q.sessionId, 'large', { questionId: pendingNow.callId });
    expect((await reader.wait(turnId)).kind).toBe('done');
  }, 60_000);
});
