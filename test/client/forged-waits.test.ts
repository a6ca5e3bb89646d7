/**
 * Views of what waits on a person show what the waiting turn says, not what a signal to its
 * session claims. Anyone who reaches the Temporal server can signal a session `turnStatus` or
 * `backgroundStatus`: a real call's id with harmless-looking arguments (and the real digest, which
 * the history shows), a wait of a turn that runs, a turn that is not there, another session's, or
 * the session's own turn posing as a background sub-agent. HarnessClient.pending(), `harness
 * pending`, status, `harness sessions` and the console's inbox each read the waiting turn's own
 * history; a decision goes only where the waiting turn is. A turn that offers sub-agents hears of
 * their waits by the same signal: what `wait`, `approve` and the decision itself show of such a
 * wait is what the sub-agent says. Real Temporal and worker, the default
 * policy (a write tool asks).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { HarnessClient } from '../../api/client';
import { defineAgent } from '../../index';
import { pendingApprovals } from '../../client/session-status';
import { TroubleWait } from '../../client/trouble-wait';
import type { PendingApprovalItem } from '../../client/pending';
import { inbox } from '../../console/api';
import { decidedAt } from '../../client/turn-record';
import { startHarness, type TestHarness } from '../support/harness';
import { shipParcel } from '../support/ship-tool';
import { scriptFiles } from '../support/agent-scripts';
import { gatedFactsTool } from '../support/gated-tool';
import { cliEnv, parseJson, removeTempDirs, runCli, tempDir } from '../support/cli';

const { tool: gate, waiting: gates } = gatedFactsTool();

const dir = mkdtempSync(path.join(os.tmpdir(), 'harness-forged-waits-'));
const scriptFile = scriptFiles(dir);
let h: TestHarness;
let client: HarnessClient;

beforeAll(async () => {
  h = await startHarness({ tools: [shipParcel, gate] });
  client = new HarnessClient(h.client, { taskQueue: h.taskQueue, env: {}, cwd: dir });
});
afterAll(async () => {
  for (const open of gates.splice(0)) open();
  await h?.stop();
  rmSync(dir, { recursive: true, force: true });
  removeTempDirs();
});

/** Sends `signals` to the session and waits until its history holds them all. */
async function signalSession(sessionId: string, signals: Array<[string, unknown]>): Promise<void> {
  const handle = h.client.workflow.getHandle(sessionId);
  const count = async () => (await handle.fetchHistory()).events?.filter((e) => e.workflowExecutionSignaledEventAttributes).length ?? 0;
  const before = await count();
  for (const [name, arg] of signals) await handle.signal(name, arg);
  await expect.poll(count, { timeout: 30_000, interval: 200 }).toBe(before + signals.length);
}

const shipTo = (to: string) => scriptFile({ steps: [{ tool_calls: [{ name: 'ship_parcel', arguments: { to } }] }, { content: `Shipped to ${to}.` }] });

it('a forged status naming the real call shows the call as its turn asks it; made-up, foreign and self-posing background waits are not shown', async () => {
  const a = await client.run('Ship to Oslo.', { model: shipTo('Oslo') });
  const b = await client.run('Ship to Lima.', { model: shipTo('Lima') });
  expect([a.kind, b.kind]).toEqual(['waiting', 'waiting']);
  const mine = async () => (await client.pending()).filter((i) => i.sessionId === a.sessionId) as PendingApprovalItem[];
  await expect.poll(async () => (await mine()).length, { timeout: 20_000, interval: 200 }).toBe(1);
  const [real] = await mine();
  expect(real).toMatchObject({ kind: 'approval', turnId: a.turnId, tool: 'ship_parcel', args: { to: 'Oslo' }, risk: 'write' });
  const foreign = (await client.pending()).find((i) => i.sessionId === b.sessionId) as PendingApprovalItem;

  const forgedCall = { callId: real!.callId, tool: 'ship_parcel', args: { to: 'Nowhere' }, digest: real!.digest, risk: 'read_only', reason: 'harmless' };
  const pendingOf = (calls: unknown[]) => ({ kind: 'approvals', calls });
  await signalSession(a.sessionId, [
    ['turnStatus', { turnId: a.turnId, status: 'waiting_for_approval', pending: pendingOf([forgedCall]) }],
    // No such sub-agent; another session's waiting turn; the session's own turn posing as a background sub-agent.
    ['backgroundStatus', { turnId: `${a.turnId}/agent-forged`, status: 'waiting_for_approval', path: ['ghost'], pending: pendingOf([{ ...forgedCall, callId: 'c-ghost' }]) }],
    ['backgroundStatus', { turnId: b.turnId, status: 'waiting_for_approval', path: ['ghost'], pending: pendingOf([{ ...forgedCall, callId: foreign.callId }]) }],
    ['backgroundStatus', { turnId: a.turnId, status: 'waiting_for_approval', path: ['ghost'], pending: pendingOf([forgedCall]) }],
  ]);

  const shown = await mine();
  expect(shown).toHaveLength(1);
  expect(shown[0]).toMatchObject({ turnId: a.turnId, callId: real!.callId, args: { to: 'Oslo' }, digest: real!.digest, risk: 'write', reason: real!.reason });
  expect(shown[0]!.agentPath).toBeUndefined();
  const status = await client.status(a.sessionId);
  expect(status.pending).toMatchObject({ kind: 'approvals', calls: [{ callId: real!.callId, args: { to: 'Oslo' }, risk: 'write' }] });

  const env = cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_HOME: tempDir('harness-forged-waits-home-'), HARNESS_TASK_QUEUE: h.taskQueue });
  const cli = parseJson<Array<Record<string, unknown>>>(await runCli(['pending', '--json'], { env })).filter((i) => i.session_id === a.sessionId);
  expect(cli).toEqual([expect.objectContaining({ call_id: real!.callId, args: { to: 'Oslo' }, risk: 'write' })]);
  const rows = parseJson<Array<{ session_id: string; state: string; pending?: unknown }>>(await runCli(['sessions', '--json'], { env }));
  expect(rows.find((r) => r.session_id === a.sessionId)).toMatchObject({ state: 'waiting_for_approval', pending: { kind: 'approvals', calls: [{ args: { to: 'Oslo' }, risk: 'write' }] } });
  const text = await runCli(['status', a.sessionId], { env });
  expect(text.code).toBe(0);
  expect(text.stdout).toContain('Oslo');
  expect(text.stdout).not.toContain('Nowhere');
  expect(text.stdout).not.toContain('ghost');

  const items = (await inbox({ harness: client, home: dir, env: {}, taskQueue: h.taskQueue, namespace: 'default' })).filter((i) => JSON.stringify(i).includes(a.sessionId));
  expect(items).toHaveLength(1);
  expect(JSON.stringify(items[0])).toContain('Oslo');
  expect(JSON.stringify(items[0])).not.toContain('Nowhere');

  for (const s of [a, b]) {
    const item = (await client.pending()).find((i) => i.sessionId === s.sessionId) as PendingApprovalItem;
    const { turnId } = await client.approve(s.sessionId, { callIds: [item.callId] });
    expect((await client.wait(turnId)).kind).toBe('done');
  }
}, 120_000);

it('a turn that runs, said by a forged signal to wait, is shown running with nothing pending', async () => {
  const out = await client.send('Gather.', { model: scriptFile({ steps: [{ tool_calls: [{ name: 'gather_facts', arguments: { topic: 'tides' } }] }, { content: 'Gathered.' }] }) });
  await expect.poll(() => gates.length, { timeout: 30_000, interval: 100 }).toBe(1);
  await signalSession(out.sessionId, [
    ['turnStatus', { turnId: out.turnId, status: 'waiting_for_approval', pending: { kind: 'approvals', calls: [{ callId: 'c-forged', tool: 'ship_parcel', args: { to: 'Nowhere' }, risk: 'write', reason: 'asks' }] } }],
  ]);
  expect((await client.pending()).filter((i) => i.sessionId === out.sessionId)).toEqual([]);
  const s = await client.status(out.sessionId);
  expect(s.status).toBe('running');
  expect(s.pending).toBeUndefined();
  const env = cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_HOME: tempDir('harness-forged-waits-home-'), HARNESS_TASK_QUEUE: h.taskQueue });
  const rows = parseJson<Array<{ session_id: string; state: string; pending?: unknown }>>(await runCli(['sessions', '--json'], { env }));
  const row = rows.find((r) => r.session_id === out.sessionId);
  expect(row?.state).toBe('running');
  expect(row?.pending).toBeUndefined();
  gates.shift()!();
  expect((await client.wait(out.turnId)).kind).toBe('done');
}, 120_000);

it("a forged background wait naming another session's turn does not carry a decision there", async () => {
  const idle = await client.run('Hello.', { model: scriptFile({ steps: [{ content: 'Hi.' }] }) });
  const other = await client.run('Ship to Quito.', { model: shipTo('Quito') });
  expect([idle.kind, other.kind]).toEqual(['done', 'waiting']);
  await expect.poll(async () => (await client.pending()).filter((i) => i.sessionId === other.sessionId).length, { timeout: 20_000, interval: 200 }).toBe(1);
  const theirs = (await client.pending()).find((i) => i.sessionId === other.sessionId) as PendingApprovalItem;
  const call = { callId: theirs.callId, tool: 'ship_parcel', args: { to: 'Quito' }, digest: theirs.digest, risk: 'write', reason: theirs.reason };
  await signalSession(idle.sessionId, [
    ['backgroundStatus', { turnId: other.turnId, status: 'waiting_for_approval', path: ['ghost'], pending: { kind: 'approvals', calls: [call], agent: { turnId: other.turnId, path: ['ghost'], background: true } } }],
  ]);
  // "Approve everything pending in this session" and "approve this call id" alike find nothing to decide here.
  await expect(client.approve(idle.sessionId)).rejects.toThrow(`session ${idle.sessionId} has no pending approval`);
  await expect(client.approve(idle.sessionId, { callIds: [theirs.callId] })).rejects.toThrow(`session ${idle.sessionId} has no pending approval`);
  await expect(client.answer(idle.sessionId, 'yes')).rejects.toThrow(`session ${idle.sessionId} is not waiting for an answer`);
  expect((await client.pending()).filter((i) => i.sessionId === other.sessionId)).toEqual([expect.objectContaining({ callId: theirs.callId, args: { to: 'Quito' } })]);
  const { turnId } = await client.approve(other.sessionId, { callIds: [theirs.callId] });
  expect((await client.wait(turnId)).kind).toBe('done');
}, 120_000);

it("a forged status to a turn that offers sub-agents: wait and approve show the sub-agent's own call; a child said to wait that runs is not waited on", async () => {
  const clerk = defineAgent({ name: 'clerk', instructions: 'You ship.', model: shipTo('Oslo'), tools: [shipParcel] });
  const gatherer = defineAgent({ name: 'gatherer', instructions: 'You gather.', model: scriptFile({ steps: [{ tool_calls: [{ name: 'gather_facts', arguments: { topic: 'tides' } }] }, { content: 'Tides.' }] }), tools: [gate] });
  const delegate = (to: string) => scriptFile({ steps: [{ tool_calls: [{ name: `agent__${to}`, arguments: { task: 'Do it.' } }] }, { content: 'Done.' }] });
  const boss = defineAgent({ name: 'boss', instructions: 'You delegate.', model: delegate('clerk'), agents: ['clerk'] });
  const chief = defineAgent({ name: 'chief', instructions: 'You delegate.', model: delegate('gatherer'), agents: ['gatherer'] });
  h.declarations.add({ agents: [boss.spec, clerk.spec, chief.spec, gatherer.spec] });
  const troubleWait = () => new TroubleWait({ deadline: Date.now() + 30_000 });

  const sent = await client.send('Ship it.', { agent: 'boss' });
  const child = `${sent.turnId}/agent-t1-s1-c0`;
  const asked = await client.wait(sent.turnId, { timeoutMs: 60_000 });
  expect(asked.kind === 'waiting' && asked.state.pending).toMatchObject({ kind: 'approvals', calls: [{ tool: 'ship_parcel', args: { to: 'Oslo' } }], agent: { turnId: child } });
  const real = asked.kind === 'waiting' && asked.state.pending?.kind === 'approvals' ? asked.state.pending.calls[0]! : undefined;
  // The child's real call id and digest, shown with harmless arguments, as if the child had said so.
  const forged = { kind: 'approvals', calls: [{ ...real, args: { to: 'Nowhere' }, risk: 'read_only', reason: 'harmless' }], agent: { turnId: child, path: ['boss', 'ghost'] } };
  const turn = h.client.workflow.getHandle(sent.turnId);
  await turn.signal('turnStatus', { turnId: child, status: 'waiting_for_approval', pending: forged });
  await expect.poll(async () => JSON.stringify(await turn.query('turnState')), { timeout: 20_000, interval: 200 }).toContain('Nowhere');

  const again = await client.wait(sent.turnId, { timeoutMs: 60_000 });
  expect(again.kind === 'waiting' && again.state.pending).toMatchObject({ calls: [{ callId: real!.callId, args: { to: 'Oslo' }, risk: 'write' }], agent: { turnId: child, path: ['boss', 'clerk'] } });
  const shown = await pendingApprovals(h.client, sent.sessionId, troubleWait());
  expect(shown.calls).toEqual([expect.objectContaining({ callId: real!.callId, args: { to: 'Oslo' }, risk: 'write' })]);
  const decided = await client.approve(sent.sessionId, { callIds: [real!.callId] });
  expect(decided.calls).toEqual([expect.objectContaining({ args: { to: 'Oslo' } })]);
  expect((await client.wait(sent.turnId, { timeoutMs: 60_000 })).kind).toBe('done');

  // A child that runs, said to wait: its parent is shown running and nothing is pending to approve.
  const busy = await client.send('Gather.', { agent: 'chief' });
  await expect.poll(() => gates.length, { timeout: 30_000, interval: 100 }).toBe(1);
  const busyTurn = h.client.workflow.getHandle(busy.turnId);
  await busyTurn.signal('turnStatus', { turnId: `${busy.turnId}/agent-t1-s1-c0`, status: 'waiting_for_approval', pending: { ...forged, agent: { turnId: `${busy.turnId}/agent-t1-s1-c0`, path: ['chief', 'gatherer'] } } });
  await expect.poll(async () => JSON.stringify(await busyTurn.query('turnState')), { timeout: 20_000, interval: 200 }).toContain('Nowhere');
  expect(await pendingApprovals(h.client, busy.sessionId, troubleWait())).toEqual({ status: 'running', turnId: busy.turnId, calls: [] });
  await expect(client.approve(busy.sessionId, { callIds: [real!.callId] })).rejects.toThrow(`session ${busy.sessionId} has no pending approval`);
  await expect(client.wait(busy.turnId, { timeoutMs: 1_500 })).rejects.toThrow();
  gates.shift()!();
  expect((await client.wait(busy.turnId, { timeoutMs: 60_000 })).kind).toBe('done');
}, 150_000);

it('a turn passes a decision on only to a sub-agent turn below it', () => {
  const approvals = (agent?: string) => ({ kind: 'approvals' as const, calls: [], ...(agent ? { agent: { turnId: agent, path: ['a'] } } : {}) });
  expect(decidedAt('s/turn-1', approvals())).toBe('s/turn-1');
  expect(decidedAt('s/turn-1', approvals('s/turn-1/agent-t1-s1-c0'))).toBe('s/turn-1/agent-t1-s1-c0');
  expect(decidedAt('s/turn-1', approvals('s/turn-1/agent-t1-s1-c0/agent-t1-s2-c0'))).toBe('s/turn-1/agent-t1-s1-c0/agent-t1-s2-c0');
  for (const elsewhere of ['other/turn-1', 's/turn-10', 's/turn-1x/agent-c', 's/turn-2/agent-t1-s1-c0']) expect(decidedAt('s/turn-1', approvals(elsewhere))).toBeUndefined();
});
