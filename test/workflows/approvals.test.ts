/**
 * Human approvals through the real session and turn workflows, under the default rules in `ask`
 * mode: a call the policy asks about waits durably, a decision (from any client) lets it run or
 * gives the model APPROVAL_DENIED / APPROVAL_TIMEOUT, the validator rejects stale decisions, and
 * every decision can be found again in the workflow history.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import Docker from 'dockerode';
import { Client, type WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeOrphans } from '../../activities/sandbox/containers';
import type { TurnResult } from '../../deterministic/session';
import type { PendingApproval, SessionState, TurnState } from '../../deterministic/session-state';
import type { SessionConfig } from '../../deterministic/session-config';
import type { ToolCallRecord } from '../../deterministic/call-records';
import type { ChatMessage, ToolResult } from '../../deterministic/types';
import { UserError } from '../../machine/errors';
import { decideApprovals, sendMessage, sessionState } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { decideApprovalsUpdate, turnStateQuery } from '../../deterministic/messages';
import { DEFAULT_POLICY, newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';

/** The default rules in `ask` mode: what a user gets without any policy configuration. */
const ASK = DEFAULT_POLICY;

let h: TestHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  // run_shell made session containers labelled with this worker's home: remove them.
  await removeOrphans(new Docker(), [], { home: h?.home }).catch(() => undefined);
  await h?.stop();
  if (h?.home) rmSync(h.home, { recursive: true, force: true });
});

type Step = Record<string, unknown>;
const config = (steps: Step[], limits: Partial<SessionConfig['limits']> = {}): SessionConfig => scriptedConfig({ steps }, limits, ASK);
const call = (name: string, args: Record<string, unknown>, id?: string) => ({ ...(id ? { id } : {}), name, arguments: args });
const workspaceFile = (sessionId: string, file: string) => path.join(h.home, 'workspaces', sessionId, file);

/** The tool results the turn sent back to the model, by call id. */
function toolResults(messages: ChatMessage[]): Map<string, ToolResult> {
  const out = new Map<string, ToolResult>();
  for (const m of messages) if (m.role === 'tool') out.set(m.tool_call_id, JSON.parse(m.content) as ToolResult);
  return out;
}

/** Waits until the session's `state` query shows the approvals (the turn tells it by signal). */
async function waitingForApproval(sessionId: string, calls = 1): Promise<SessionState> {
  await expect
    .poll(
      async () => {
        const s = await sessionState(h.client, sessionId);
        return s.status === 'waiting_for_approval' && s.pending?.kind === 'approvals' ? s.pending.calls.length : s.status;
      },
      { timeout: 20_000, interval: 50 },
    )
    .toBe(calls);
  return sessionState(h.client, sessionId);
}

async function idle(sessionId: string): Promise<void> {
  await expect.poll(async () => (await sessionState(h.client, sessionId)).status, { timeout: 20_000, interval: 50 }).toBe('idle');
}

/** Starts a turn that must stop to wait for approval; returns its waiting state. */
async function turnWaiting(sessionId: string, cfg: SessionConfig, text: string): Promise<TurnState> {
  const out = await h.turn(sessionId, cfg, text);
  if (out.kind !== 'waiting') throw new Error(`expected the turn to wait for approval, it finished: ${JSON.stringify(out.result.toolCalls)}`);
  expect(out.state.status).toBe('waiting_for_approval');
  return out.state;
}

const turnResult = async (turnId: string): Promise<TurnResult & { messages: ChatMessage[] }> => {
  const r = (await h.client.workflow.getHandle(turnId).result()) as TurnResult;
  return { ...r, messages: await h.messages(r) };
};

describe('approvals in ask mode', () => {
  it('waits on a write_file call and runs it once approved, recording the policy decision and the approver', async () => {
    const sessionId = newSessionId('appr-yes');
    const args = { path: 'notes.txt', content: 'approved content' };
    const cfg = config([
      { tool_calls: [call('write_file', args, 'call_w1')] },
      { expect: { last_message_contains: '"ok":true' }, content: 'Wrote notes.txt. HARNESS_OK' },
    ]);
    const waiting = await turnWaiting(sessionId, cfg, 'write a note');
    expect(waiting.pending).toMatchObject({ kind: 'approvals', calls: [{ callId: 't1-s1-c0', tool: 'write_file', args, risk: 'write' }] });

    const state = await waitingForApproval(sessionId);
    expect(state.currentTurnId).toBe(`${sessionId}/turn-1`);
    expect(state.pending?.kind).toBe('approvals');
    if (state.pending?.kind !== 'approvals') return;
    const [pending] = state.pending.calls;
    expect(pending).toMatchObject({ callId: 't1-s1-c0', tool: 'write_file', args, risk: 'write', rule: 'mode ask', digest: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expect(pending!.reason).toMatch(/write_file.*ask/);
    expect(existsSync(workspaceFile(sessionId, 'notes.txt')), 'nothing runs before the approval').toBe(false);

    const before = Date.now();
    const { turnId, calls } = await decideApprovals(h.client, sessionId, { approve: true });
    expect(turnId).toBe(`${sessionId}/turn-1`);
    expect(calls).toEqual([pending]);
    const r = await turnResult(turnId);
    expect(r.terminated_by).toBe('final_answer');
    expect(r.answer).toBe('Wrote notes.txt. HARNESS_OK');
    expect(readFileSync(workspaceFile(sessionId, 'notes.txt'), 'utf8')).toBe('approved content');
    expect(r.toolCalls).toEqual([
      expect.objectContaining({
        step: 1,
        callId: 't1-s1-c0',
        name: 'write_file',
        args,
        ok: true,
        policy: { decision: 'ask', rule: 'mode ask', reason: pending!.reason },
        // Who and when are the update's event (identity, server time): the record names it.
        approval: { approved: true, updateId: expect.any(String) },
      }),
    ]);
    const events = (await h.client.workflow.getHandle(turnId).fetchHistory()).events ?? [];
    const accepted = events.find(
      (e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.meta?.updateId === r.toolCalls[0]!.approval!.updateId,
    );
    expect(accepted?.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.meta?.identity).toBeTruthy();
    const at = Number(accepted!.eventTime!.seconds) * 1000;
    expect(at).toBeGreaterThanOrEqual(before - 5_000);
    expect(at).toBeLessThanOrEqual(Date.now() + 5_000);

    await idle(sessionId);
    expect((await sessionState(h.client, sessionId)).pending).toBeUndefined();
  });

  it('gives the model APPROVAL_DENIED with the reason when a human denies, writes nothing and goes on to a final answer', async () => {
    const sessionId = newSessionId('appr-no');
    const cfg = config([
      { tool_calls: [call('write_file', { path: 'secret.txt', content: 'token=abc' }, 'call_s1')] },
      {
        expect: { last_message_contains: 'APPROVAL_DENIED', messages_contain: 'secrets stay out of the workspace' },
        content: 'Understood, I will not write it. HARNESS_OK',
      },
    ]);
    await turnWaiting(sessionId, cfg, 'store the token');
    await waitingForApproval(sessionId);

    const { turnId } = await decideApprovals(h.client, sessionId, { approve: false, reason: 'secrets stay out of the workspace' });
    const r = await turnResult(turnId);
    expect(r.terminated_by).toBe('final_answer');
    expect(r.answer).toBe('Understood, I will not write it. HARNESS_OK');
    expect(existsSync(workspaceFile(sessionId, 'secret.txt'))).toBe(false);

    const result = toolResults(r.messages).get('t1-s1-c0');
    expect(result).toMatchObject({ ok: false, error_type: 'APPROVAL_DENIED' });
    expect(result!.message).toContain('secrets stay out of the workspace');
    expect(r.toolCalls).toEqual([
      expect.objectContaining({
        name: 'write_file',
        ok: false,
        error_type: 'APPROVAL_DENIED',
        policy: expect.objectContaining({ decision: 'ask' }),
        approval: expect.objectContaining({ approved: false, reason: 'secrets stay out of the workspace' }),
      }),
    ]);
    await idle(sessionId);
  });

  it('gives the model APPROVAL_TIMEOUT when nobody decides within approvalTimeoutMs, and the turn continues', async () => {
    const sessionId = newSessionId('appr-late');
    const cfg = config(
      [
        { tool_calls: [call('write_file', { path: 'late.txt', content: 'x' }, 'call_l1')] },
        { expect: { last_message_contains: 'APPROVAL_TIMEOUT' }, content: 'Nobody approved; moving on. HARNESS_OK' },
      ],
      { approvalTimeoutMs: 1500 },
    );
    const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config: cfg, text: 'write late' });
    const r = await turnResult(turnId);
    expect(r.terminated_by).toBe('final_answer');
    expect(r.answer).toBe('Nobody approved; moving on. HARNESS_OK');
    expect(existsSync(workspaceFile(sessionId, 'late.txt'))).toBe(false);
    expect(toolResults(r.messages).get('t1-s1-c0')).toMatchObject({ ok: false, error_type: 'APPROVAL_TIMEOUT' });
    expect(r.toolCalls).toEqual([
      expect.objectContaining({
        name: 'write_file',
        ok: false,
        error_type: 'APPROVAL_TIMEOUT',
        policy: expect.objectContaining({ decision: 'ask' }),
        approval: { approved: false, timedOut: true },
      }),
    ]);
    await idle(sessionId);
  });

  it('rejects a decision for an unknown call id without changing anything, then accepts a valid one; with nothing pending it is a UserError', async () => {
    const sessionId = newSessionId('appr-bad');
    const cfg = config([
      { tool_calls: [call('write_file', { path: 'ok.txt', content: 'fine' }, 'call_k1')] },
      { expect: { last_message_contains: '"ok":true' }, content: 'Done. HARNESS_OK' },
    ]);
    const waiting = await turnWaiting(sessionId, cfg, 'write ok.txt');
    const before = await waitingForApproval(sessionId);

    const err = await decideApprovals(h.client, sessionId, { callIds: ['nope'], approve: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserError);
    expect((err as Error).message).toMatch(/nope.*not pending/);
    expect((err as Error).message).not.toContain('\n');

    // `always` only goes with an approval.
    const odd = await decideApprovals(h.client, sessionId, { approve: false, always: true }).catch((e: unknown) => e);
    expect(odd).toBeInstanceOf(UserError);
    expect((odd as Error).message).toMatch(/--always only goes with an approval/);

    // Nothing changed: the turn and the session still wait on the same call.
    const turn = h.client.workflow.getHandle(waiting.turnId);
    expect((await turn.query(turnStateQuery)) as TurnState).toEqual(waiting);
    expect(await sessionState(h.client, sessionId)).toEqual(before);
    expect(existsSync(workspaceFile(sessionId, 'ok.txt'))).toBe(false);
    // Refused updates leave no trace in history.
    const accepted = ((await turn.fetchHistory()).events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes);
    expect(accepted).toHaveLength(0);

    await decideApprovals(h.client, sessionId, { callIds: ['t1-s1-c0'], approve: true });
    const r = await turnResult(waiting.turnId);
    expect(r.terminated_by).toBe('final_answer');
    expect(readFileSync(workspaceFile(sessionId, 'ok.txt'), 'utf8')).toBe('fine');
    expect(r.toolCalls[0]).toMatchObject({ callId: 't1-s1-c0', ok: true, approval: { approved: true } });

    await idle(sessionId);
    const none = await decideApprovals(h.client, sessionId, { approve: true }).catch((e: unknown) => e);
    expect(none).toBeInstanceOf(UserError);
    expect((none as Error).message).toMatch(/has no pending approval \(status: idle\)/);
    expect((none as UserError).hint).toMatch(/harness status/);

    const missing = await decideApprovals(h.client, newSessionId('nosuch'), { approve: true }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(UserError);
    expect((missing as Error).message).toMatch(/no session named/);
  });

  it('approves several pending calls of one step together with one decision, and all of them run', async () => {
    const sessionId = newSessionId('appr-all');
    const cfg = config([
      {
        tool_calls: [call('write_file', { path: 'a.txt', content: 'A' }, 'call_a'), call('write_file', { path: 'b.txt', content: 'B' }, 'call_b')],
      },
      { expect: { messages_contain: '"ok":true' }, content: 'Both written. HARNESS_OK' },
    ]);
    const waiting = await turnWaiting(sessionId, cfg, 'write two files');
    expect(waiting.pending).toMatchObject({ kind: 'approvals', calls: [{ callId: 't1-s1-c0' }, { callId: 't1-s1-c1' }] });
    await waitingForApproval(sessionId, 2);

    await decideApprovals(h.client, sessionId, { approve: true });
    const r = await turnResult(waiting.turnId);
    expect(r.terminated_by).toBe('final_answer');
    expect(readFileSync(workspaceFile(sessionId, 'a.txt'), 'utf8')).toBe('A');
    expect(readFileSync(workspaceFile(sessionId, 'b.txt'), 'utf8')).toBe('B');
    expect(r.toolCalls).toEqual([
      expect.objectContaining({ callId: 't1-s1-c0', ok: true, approval: expect.objectContaining({ approved: true }) }),
      expect.objectContaining({ callId: 't1-s1-c1', ok: true, approval: expect.objectContaining({ approved: true }) }),
    ]);
  });

  it('decides the calls of one step one at a time: a decided id is rejected afterwards, and the others keep waiting', async () => {
    const sessionId = newSessionId('appr-each');
    const cfg = config([
      {
        tool_calls: [call('write_file', { path: 'keep.txt', content: 'K' }, 'call_keep'), call('write_file', { path: 'drop.txt', content: 'D' }, 'call_drop')],
      },
      { expect: { last_message_contains: 'APPROVAL_DENIED' }, content: 'One written, one denied. HARNESS_OK' },
    ]);
    const waiting = await turnWaiting(sessionId, cfg, 'write two files');
    await waitingForApproval(sessionId, 2);

    await decideApprovals(h.client, sessionId, { callIds: ['t1-s1-c0'], approve: true });
    const turn = h.client.workflow.getHandle(waiting.turnId);
    const ts = (await turn.query(turnStateQuery)) as TurnState;
    expect(ts.status).toBe('waiting_for_approval');
    expect(ts.pending).toMatchObject({ kind: 'approvals', calls: [{ callId: 't1-s1-c1' }] });
    expect(existsSync(workspaceFile(sessionId, 'keep.txt')), 'a step runs once all its asked calls are decided').toBe(false);

    const again = await decideApprovals(h.client, sessionId, { callIds: ['t1-s1-c0'], approve: false, reason: 'changed my mind' }).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(UserError);
    expect((again as Error).message).toMatch(/t1-s1-c0 is not pending \(unknown or already decided\)/);

    await decideApprovals(h.client, sessionId, { callIds: ['t1-s1-c1'], approve: false, reason: 'not that one' });
    const r = await turnResult(waiting.turnId);
    expect(r.terminated_by).toBe('final_answer');
    expect(readFileSync(workspaceFile(sessionId, 'keep.txt'), 'utf8')).toBe('K');
    expect(existsSync(workspaceFile(sessionId, 'drop.txt'))).toBe(false);
    expect(r.toolCalls).toEqual([
      expect.objectContaining({ callId: 't1-s1-c0', ok: true, approval: expect.objectContaining({ approved: true }) }),
      expect.objectContaining({ callId: 't1-s1-c1', ok: false, error_type: 'APPROVAL_DENIED', approval: expect.objectContaining({ approved: false, reason: 'not that one' }) }),
    ]);
  });

  it("shows only the still-undecided calls in the session's state after part of a step was decided", async () => {
    const sessionId = newSessionId('appr-view');
    const cfg = config([
      {
        tool_calls: [call('write_file', { path: 'one.txt', content: '1' }, 'call_one'), call('write_file', { path: 'two.txt', content: '2' }, 'call_two')],
      },
      { content: 'Done. HARNESS_OK' },
    ]);
    const waiting = await turnWaiting(sessionId, cfg, 'write two files');
    await waitingForApproval(sessionId, 2);
    await decideApprovals(h.client, sessionId, { callIds: ['t1-s1-c0'], approve: true });

    // `harness status` reads the session's state: a decided call must not be offered again.
    try {
      await expect
        .poll(
          async () => {
            const s = await sessionState(h.client, sessionId);
            return s.pending?.kind === 'approvals' ? s.pending.calls.map((c) => c.callId) : s.status;
          },
          { timeout: 10_000, interval: 100 },
        )
        .toEqual(['t1-s1-c1']);
    } finally {
      // Let the turn end either way so the session is not left waiting.
      await decideApprovals(h.client, sessionId, { callIds: ['t1-s1-c1'], approve: true }).catch(() => undefined);
      await turnResult(waiting.turnId);
    }
  });

  it('with --always and typed words adds a session rule: that command prefix runs without asking in later steps and turns, but not in a new session', async () => {
    const sessionId = newSessionId('appr-always');
    // The sandbox has no npm: the allowed calls do run (in the container) and fail there with
    // EXECUTION_ERROR, which is what shows they were not held for approval.
    const cfg = config(
      [
        // turn 1
        { tool_calls: [call('run_shell', { command: 'npm install left-pad' }, 'call_n1')] },
        { tool_calls: [call('run_shell', { command: 'npm install lodash' }, 'call_n2')] },
        { expect: { last_message_contains: 'EXECUTION_ERROR' }, content: 'Turn one done. HARNESS_OK' },
        // turn 2: the same prefix runs at once; another program still asks
        { tool_calls: [call('run_shell', { command: 'npm install zod --save' }, 'call_n3')] },
        { tool_calls: [call('run_shell', { command: 'touch marker.txt' }, 'call_t1')] },
        { expect: { last_message_contains: '"ok":true' }, content: 'Turn two done. HARNESS_OK' },
      ],
      { approvalTimeoutMs: 10 * 60_000 },
    );
    const first = await turnWaiting(sessionId, cfg, 'install left-pad');
    expect(first.pending).toMatchObject({ kind: 'approvals', calls: [{ callId: 't1-s1-c0', tool: 'run_shell', args: { command: 'npm install left-pad' } }] });
    await waitingForApproval(sessionId);
    // The person typed the words to grant (`--always "npm install"`); --always alone grants
    // exactly the command shown.
    await decideApprovals(h.client, sessionId, { approve: true, always: true, pattern: 'npm install' });

    const out1 = await waitForTurn(h.client, first.turnId, { pollMs: 100 });
    if (out1.kind !== 'done') throw new Error(`the same prefix asked again: ${JSON.stringify(out1.state.pending)}`);
    const r1 = out1.result;
    expect(r1.terminated_by).toBe('final_answer');
    const always = { tool: 'run_shell', decision: 'allow', when: { commandPrefix: 'npm install' } };
    expect(r1.sessionRules).toEqual([expect.objectContaining({ ...always, id: 'always:run_shell:npm install' })]);
    expect(r1.toolCalls).toEqual([
      expect.objectContaining({ callId: 't1-s1-c0', policy: expect.objectContaining({ decision: 'ask' }), approval: expect.objectContaining({ approved: true, always: true }) }),
      expect.objectContaining({ callId: 't1-s2-c0', error_type: 'EXECUTION_ERROR', policy: expect.objectContaining({ decision: 'allow', rule: 'always:run_shell:npm install' }) }),
    ]);
    expect(r1.toolCalls[1]).not.toHaveProperty('approval');
    await idle(sessionId);

    // A later turn of the same session: npm install runs at once, touch waits.
    const second = await turnWaiting(sessionId, cfg, 'install zod, then touch a marker');
    expect(second.pending).toMatchObject({ kind: 'approvals', calls: [{ callId: 't2-s2-c0', args: { command: 'touch marker.txt' } }] });
    await waitingForApproval(sessionId);
    await decideApprovals(h.client, sessionId, { approve: true });
    const r2 = await turnResult(second.turnId);
    expect(r2.terminated_by).toBe('final_answer');
    expect(r2.toolCalls).toEqual([
      expect.objectContaining({ callId: 't2-s1-c0', policy: expect.objectContaining({ decision: 'allow', rule: 'always:run_shell:npm install' }) }),
      expect.objectContaining({ callId: 't2-s2-c0', ok: true, policy: expect.objectContaining({ decision: 'ask' }), approval: expect.objectContaining({ approved: true }) }),
    ]);
    expect(existsSync(workspaceFile(sessionId, 'marker.txt'))).toBe(true);
    await idle(sessionId);

    // A new session knows nothing of the rule.
    const other = newSessionId('appr-always-new');
    const cfg2 = config([
      { tool_calls: [call('run_shell', { command: 'npm install lodash' }, 'call_x1')] },
      { expect: { last_message_contains: 'APPROVAL_DENIED' }, content: 'Not installed. HARNESS_OK' },
    ]);
    const fresh = await turnWaiting(other, cfg2, 'install lodash');
    expect(fresh.pending).toMatchObject({ kind: 'approvals', calls: [{ callId: 't1-s1-c0', tool: 'run_shell', rule: 'mode ask' }] });
    await waitingForApproval(other);
    await decideApprovals(h.client, other, { approve: false, reason: 'not here' });
    expect((await turnResult(fresh.turnId)).terminated_by).toBe('final_answer');
  });

  it('denies run_shell `sudo id` by policy: the model sees PERMISSION_DENIED, the rule is recorded and the session stays usable', async () => {
    const sessionId = newSessionId('appr-sudo');
    const cfg = config([
      { tool_calls: [call('run_shell', { command: 'sudo id' }, 'call_su')] },
      { expect: { last_message_contains: 'PERMISSION_DENIED' }, content: 'I may not use sudo. HARNESS_OK' },
      { content: 'Still here. HARNESS_OK' },
    ]);
    const r = await h.finish(sessionId, cfg, 'who am i as root?');
    expect(r.terminated_by).toBe('final_answer');
    const res = toolResults(r.messages).get('t1-s1-c0');
    expect(res).toMatchObject({ ok: false, error_type: 'PERMISSION_DENIED' });
    expect(res!.message).toMatch(/sudo/);
    expect(r.toolCalls).toEqual([
      {
        step: 1,
        callId: 't1-s1-c0',
        name: 'run_shell',
        args: { command: 'sudo id' },
        ok: false,
        error_type: 'PERMISSION_DENIED',
        policy: { decision: 'deny', rule: 'deny-privilege', reason: expect.stringMatching(/sudo.*deny-privilege/) },
      },
    ]);
    await idle(sessionId);
    const next = await h.finish(sessionId, cfg, 'anything else?');
    expect(next.answer).toBe('Still here. HARNESS_OK');
    await idle(sessionId);
  });
});

describe('decisions are bound to the calls a person was shown', () => {
  it('gives calls the harness own ids, so a provider repeating its ids cannot have a later call approved by an earlier decision', async () => {
    const sessionId = newSessionId('appr-ids');
    // The provider sends the same id every step, as some compatible servers do.
    const cfg = config([
      { tool_calls: [call('write_file', { path: 'first.txt', content: '1' }, 'call_0')] },
      { tool_calls: [call('write_file', { path: 'second.txt', content: '2' }, 'call_0')] },
      { content: 'Done. HARNESS_OK' },
    ]);
    const first = await turnWaiting(sessionId, cfg, 'write two files, one per step');
    expect(first.pending).toMatchObject({ calls: [{ callId: 't1-s1-c0' }] });
    await decideApprovals(h.client, sessionId, { callIds: ['t1-s1-c0'], approve: true });
    // The second step's call is a new call: it waits for its own decision.
    const turn = h.client.workflow.getHandle(first.turnId);
    await expect
      .poll(async () => {
        const ts = (await turn.query(turnStateQuery)) as TurnState;
        return ts.pending?.kind === 'approvals' ? ts.pending.calls.map((c) => c.callId) : ts.status;
      }, { timeout: 20_000, interval: 50 })
      .toEqual(['t1-s2-c0']);
    expect(existsSync(workspaceFile(sessionId, 'second.txt'))).toBe(false);
    await decideApprovals(h.client, sessionId, { callIds: ['t1-s2-c0'], approve: false, reason: 'one is enough' });
    const r = await turnResult(first.turnId);
    expect(r.toolCalls.map((c) => [c.callId, c.ok])).toEqual([
      ['t1-s1-c0', true],
      ['t1-s2-c0', false],
    ]);
    // The provider's own ids stay with the calls, for the provider.
    const assistant = r.messages.filter((m) => m.role === 'assistant' && m.tool_calls?.length);
    expect(assistant.map((m) => (m.role === 'assistant' ? m.tool_calls!.map((c) => [c.id, c.providerId]) : []))).toEqual([
      [['t1-s1-c0', 'call_0']],
      [['t1-s2-c0', 'call_0']],
    ]);
  });

  it('refuses a decision whose digest does not match the pending call, one naming a call twice, and one naming no call', async () => {
    const sessionId = newSessionId('appr-digest');
    const cfg = config([{ tool_calls: [call('write_file', { path: 'd.txt', content: 'shown' })] }, { content: 'Done. HARNESS_OK' }]);
    const waiting = await turnWaiting(sessionId, cfg, 'write d.txt');
    const turn = h.client.workflow.getHandle(waiting.turnId);
    const pending = waiting.pending?.kind === 'approvals' ? waiting.pending.calls[0]! : undefined;
    const refuse = (arg: unknown) => turn.executeUpdate(decideApprovalsUpdate, { args: [arg as never] }).then(() => 'accepted', (e: Error) => rootOf(e));
    // What another call (other arguments) would have as its digest.
    expect(await refuse({ calls: [{ callId: 't1-s1-c0', digest: '0'.repeat(32) }], approve: true })).toMatch(/not the call you were shown/);
    expect(await refuse({ calls: [pending, pending].map((c) => ({ callId: c!.callId, digest: c!.digest })), approve: true })).toMatch(/named twice/);
    expect(await refuse({ approve: true })).toMatch(/name each call/);
    expect(await refuse({ callIds: ['t1-s1-c0'], approve: true })).toMatch(/name each call/);
    expect(existsSync(workspaceFile(sessionId, 'd.txt'))).toBe(false);
    expect(((await turn.query(turnStateQuery)) as TurnState).pending).toEqual(waiting.pending);

    await decideApprovals(h.client, sessionId, { calls: [{ callId: pending!.callId, digest: pending!.digest! }], approve: true });
    expect((await turnResult(waiting.turnId)).toolCalls[0]).toMatchObject({ ok: true });
    expect(readFileSync(workspaceFile(sessionId, 'd.txt'), 'utf8')).toBe('shown');
  });
});

/** The innermost message of an update failure (the validator's words). */
function rootOf(err: Error): string {
  let e: unknown = err;
  let message = err.message;
  while (e && typeof e === 'object' && 'cause' in e && (e as { cause?: unknown }).cause) {
    e = (e as { cause: unknown }).cause;
    message = (e as Error).message || message;
  }
  return message;
}

describe('the history tells who decided what (trace-ready)', () => {
  type Event = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>[number];
  const decode = <T>(p: Payload) => defaultPayloadConverter.fromPayload<T>(p);
  const updates = (events: Event[]) =>
    events
      .filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes)
      .map((e) => e.workflowExecutionUpdateAcceptedEventAttributes!.acceptedRequest!)
      .map((req) => ({
        name: req.input!.name,
        arg: decode<Record<string, unknown>>(req.input!.args!.payloads![0]!),
        identity: req.meta!.identity,
        updateId: req.meta!.updateId,
      }));
  // Who decided is the identity of the client that sent the update, recorded by the server.
  const as = (identity: string) => new Client({ connection: h.client.connection, namespace: 'default', identity });

  it('finds the approval request, the approver, the policy record of the executed call, the policy denial with its rule, and the human denial with its reason', async () => {
    const sessionId = newSessionId('appr-trace');
    const cfg = config([
      // run_shell runs as a (non-local) activity: its scheduled event keeps the whole input.
      { tool_calls: [call('run_shell', { command: 'touch traced.txt' })] },
      {
        expect: { last_message_contains: '"ok":true' },
        tool_calls: [call('run_shell', { command: 'sudo id' }), call('write_file', { path: 'denied.txt', content: 'd' })],
      },
      { expect: { last_message_contains: 'APPROVAL_DENIED' }, content: 'Traced. HARNESS_OK' },
    ]);
    const waiting = await turnWaiting(sessionId, cfg, 'do traced things');
    await decideApprovals(as('alice@desk'), sessionId, { callIds: ['t1-s1-c0'], approve: true });
    await expect
      .poll(
        async () => {
          const ts = (await h.client.workflow.getHandle(waiting.turnId).query(turnStateQuery)) as TurnState;
          return ts.pending?.kind === 'approvals' ? ts.pending.calls.map((c) => c.callId).join(',') : ts.status;
        },
        { timeout: 30_000, interval: 50 },
      )
      .toBe('t1-s2-c1');
    await decideApprovals(as('bob@desk'), sessionId, { callIds: ['t1-s2-c1'], approve: false, reason: 'no second file' });
    expect((await turnResult(waiting.turnId)).answer).toBe('Traced. HARNESS_OK');
    expect(existsSync(workspaceFile(sessionId, 'traced.txt'))).toBe(true);

    const events = (await h.client.workflow.getHandle(waiting.turnId).fetchHistory()).events ?? [];

    // The approval requests: the turn tells its session what waits, with the rule and the reason.
    const requests = events
      .filter((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName === 'turnStatus')
      .map((e) => decode<{ status: string; pending?: { calls: PendingApproval[] } }>(e.signalExternalWorkflowExecutionInitiatedEventAttributes!.input!.payloads![0]!))
      .filter((s) => s.status === 'waiting_for_approval');
    expect(requests.map((s) => s.pending)).toEqual([
      { kind: 'approvals', calls: [expect.objectContaining({ callId: 't1-s1-c0', tool: 'run_shell', risk: expect.any(String), rule: 'mode ask', reason: expect.stringMatching(/touch/) })] },
      { kind: 'approvals', calls: [expect.objectContaining({ callId: 't1-s2-c1', tool: 'write_file', risk: 'write', rule: 'mode ask' })] },
    ]);

    // Approved call: the update names the call and the digest of what was shown, its event
    // who sent it; the executeTool input carries the policy record.
    const decided = updates(events).filter((u) => u.name === 'decideApprovals');
    expect(decided).toHaveLength(2);
    expect(decided[0]!.arg).toEqual({ calls: [{ callId: 't1-s1-c0', digest: requests[0]!.pending!.calls[0]!.digest }], approve: true });
    expect(decided[0]!.identity).toBe('alice@desk');
    const executed = events
      .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'executeTool')
      .map((e) => decode<Record<string, unknown>>(e.activityTaskScheduledEventAttributes!.input!.payloads![0]!));
    expect(executed).toEqual([
      expect.objectContaining({
        callId: 't1-s1-c0',
        name: 'run_shell',
        args: { command: 'touch traced.txt' },
        policy: { decision: 'ask', rule: 'mode ask', reason: expect.stringMatching(/touch/) },
      }),
    ]);

    // Human-denied call: the update with approve false and why; who is its event's identity.
    expect(decided[1]!.arg).toMatchObject({ calls: [{ callId: 't1-s2-c1' }], approve: false, reason: 'no second file' });
    expect(decided[1]!.identity).toBe('bob@desk');

    // Policy-denied call: the turn's completion holds the decision and the rule (nothing was executed).
    const completed = events.find((e) => e.workflowExecutionCompletedEventAttributes)!.workflowExecutionCompletedEventAttributes!;
    const result = decode<TurnResult>(completed.result!.payloads![0]!);
    const byId = new Map<string, ToolCallRecord>(result.toolCalls.map((c) => [c.callId, c]));
    expect(byId.get('t1-s2-c0')).toMatchObject({
      name: 'run_shell',
      args: { command: 'sudo id' },
      error_type: 'PERMISSION_DENIED',
      policy: { decision: 'deny', rule: 'deny-privilege', reason: expect.stringMatching(/sudo/) },
    });
    expect(byId.get('t1-s2-c0')).not.toHaveProperty('approval');
    // The record points at the update (whose event holds the identity) and carries the workflow's time.
    expect(byId.get('t1-s1-c0')).toMatchObject({ ok: true, policy: { decision: 'ask', rule: 'mode ask' }, approval: { approved: true, updateId: decided[0]!.updateId } });
    expect(byId.get('t1-s2-c1')).toMatchObject({
      ok: false,
      error_type: 'APPROVAL_DENIED',
      policy: { decision: 'ask', rule: 'mode ask' },
      approval: { approved: false, reason: 'no second file', updateId: decided[1]!.updateId },
    });
    for (const id of ['t1-s1-c0', 't1-s2-c1']) expect(byId.get(id)!.approval).not.toHaveProperty('by');
  });
});
