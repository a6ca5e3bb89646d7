import { Client, WorkflowUpdateFailedError } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TurnResult } from '../../deterministic/session';
import { UserError } from '../../machine/errors';
import { answerQuestion, sessionState } from '../../client/session-client';
import { answerUpdate } from '../../deterministic/messages';
import { newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';

let h: TestHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.stop());

const askStep = (question: string) => ({ tool_calls: [{ name: 'ask_user', arguments: { question } }] });

/** Waits until the session's state query reports the pending question. */
async function waitingForUser(sessionId: string) {
  await expect.poll(async () => (await sessionState(h.client, sessionId)).status, { timeout: 10_000, interval: 50 }).toBe('waiting_for_user');
  return sessionState(h.client, sessionId);
}

describe('ask_user', () => {
  it('waits for an answer given with answerQuestion and shows it to the model', async () => {
    const sessionId = newSessionId();
    const config = scriptedConfig({
      steps: [
        askStep('Which environment should I deploy to?'),
        { expect: { last_message_contains: 'staging-eu-7' }, content: 'Deploying to staging-eu-7. HARNESS_OK' },
      ],
    });
    const out = await h.turn(sessionId, config, 'deploy the app');
    expect(out.kind).toBe('waiting');
    if (out.kind !== 'waiting') return;
    expect(out.state.pending).toMatchObject({ kind: 'question', question: 'Which environment should I deploy to?' });

    const state = await waitingForUser(sessionId);
    expect(state.currentTurnId).toBe(`${sessionId}/turn-1`);
    expect(state.pending).toMatchObject({ kind: 'question', question: 'Which environment should I deploy to?', callId: 't1-s1-c0' });

    const turnId = await answerQuestion(h.client, sessionId, 'staging-eu-7');
    expect(turnId).toBe(`${sessionId}/turn-1`);
    const r = (await h.client.workflow.getHandle(turnId).result()) as TurnResult;
    expect(r.terminated_by).toBe('final_answer');
    expect(r.answer).toBe('Deploying to staging-eu-7. HARNESS_OK');
    expect(r.toolCalls).toEqual([expect.objectContaining({ name: 'ask_user', ok: true })]);

    await expect.poll(async () => (await sessionState(h.client, sessionId)).status, { timeout: 10_000, interval: 50 }).toBe('idle');
    expect((await sessionState(h.client, sessionId)).pending).toBeUndefined();
  });

  it('gives the model USER_TIMEOUT when nobody answers in time, and the turn continues', async () => {
    const sessionId = newSessionId();
    const config = scriptedConfig(
      {
        steps: [
          askStep('Anyone there?'),
          { expect: { last_message_contains: 'USER_TIMEOUT' }, content: 'Nobody answered; continuing without it. HARNESS_OK' },
        ],
      },
      { askUserTimeoutMs: 1500 },
    );
    const out = await h.turn(sessionId, config, 'ask me something');
    expect(out.kind).toBe('waiting');
    const r = (await h.client.workflow.getHandle(`${sessionId}/turn-1`).result()) as TurnResult;
    expect(r.terminated_by).toBe('final_answer');
    expect(r.answer).toBe('Nobody answered; continuing without it. HARNESS_OK');
    expect(r.toolCalls).toEqual([expect.objectContaining({ name: 'ask_user', ok: false, error_type: 'USER_TIMEOUT' })]);
    await expect.poll(async () => (await sessionState(h.client, sessionId)).status, { timeout: 10_000, interval: 50 }).toBe('idle');
  });

  it('rejects an answer with a one-line UserError when no question is pending', async () => {
    const sessionId = newSessionId();
    const config = scriptedConfig({ steps: [{ content: 'Nothing to ask. HARNESS_OK' }] });
    await h.finish(sessionId, config, 'hello');
    await expect.poll(async () => (await sessionState(h.client, sessionId)).status, { timeout: 10_000, interval: 50 }).toBe('idle');

    const err = await answerQuestion(h.client, sessionId, 'an unasked answer').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserError);
    expect((err as Error).message).toMatch(/not waiting for an answer \(status: idle\)/);
    expect((err as Error).message).not.toContain('\n');

    const missing = await answerQuestion(h.client, newSessionId('nosuch'), 'x').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(UserError);
    expect((missing as Error).message).toMatch(/no session named/);
    expect((missing as Error).message).not.toContain('\n');
  });

  it('rejects an empty answer and keeps the question pending', async () => {
    const sessionId = newSessionId();
    const config = scriptedConfig({
      steps: [askStep('Name?'), { expect: { last_message_contains: 'Zed' }, content: 'Hello Zed. HARNESS_OK' }],
    });
    const out = await h.turn(sessionId, config, 'greet me');
    expect(out.kind).toBe('waiting');
    const err = await answerQuestion(h.client, sessionId, '  ').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserError);
    expect((err as Error).message).toMatch(/the answer must be non-empty text/);
    // An answer joins every later model call: one over the message limit is refused by the turn itself.
    const huge = await h.client.workflow
      .getHandle(`${sessionId}/turn-1`)
      .executeUpdate(answerUpdate, { args: [{ text: 'x'.repeat(256 * 1024 + 1) }] })
      .catch((e: unknown) => e);
    expect(((huge as Error).cause as Error).message).toMatch(/more than 256 KiB/);
    expect((await waitingForUser(sessionId)).pending).toMatchObject({ question: 'Name?' });

    const turnId = await answerQuestion(h.client, sessionId, 'Zed');
    const r = (await h.client.workflow.getHandle(turnId).result()) as TurnResult;
    expect(r.answer).toBe('Hello Zed. HARNESS_OK');
  });

  it("records who answered as the answering client's identity in the update's history event, not as a field the client fills in", async () => {
    const sessionId = newSessionId();
    const config = scriptedConfig({
      steps: [askStep('Approve the plan?'), { expect: { last_message_contains: 'yes, go ahead' }, content: 'Going ahead. HARNESS_OK' }],
    });
    const out = await h.turn(sessionId, config, 'plan');
    expect(out.kind).toBe('waiting');
    const dana = new Client({ connection: h.client.connection, namespace: 'default', identity: 'dana@workstation-42' });
    const turnId = await answerQuestion(dana, sessionId, 'yes, go ahead');
    await h.client.workflow.getHandle(turnId).result();

    const history = await h.client.workflow.getHandle(turnId).fetchHistory();
    const accepted = (history.events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes);
    expect(accepted).toHaveLength(1);
    const request = accepted[0]!.workflowExecutionUpdateAcceptedEventAttributes!.acceptedRequest!;
    expect(request.input?.name).toBe('answer');
    const [arg] = (request.input?.args?.payloads ?? []).map((p) => defaultPayloadConverter.fromPayload<Record<string, unknown>>(p));
    expect(arg).toEqual({ text: 'yes, go ahead' });
    expect(request.meta?.identity).toBe('dana@workstation-42');
  });
  it('asks again when the provider repeats its call id: an earlier answer is never taken for a later question', async () => {
    const sessionId = newSessionId();
    const same = (question: string) => ({ tool_calls: [{ id: 'call_0', name: 'ask_user', arguments: { question } }] });
    const config = scriptedConfig({
      steps: [
        same('First name?'),
        { expect: { last_message_contains: 'Ada' }, ...same('Last name?') },
        { expect: { last_message_contains: 'Lovelace' }, content: 'Hello Ada Lovelace. HARNESS_OK' },
      ],
    });
    const out = await h.turn(sessionId, config, 'greet me');
    expect(out.kind === 'waiting' && out.state.pending).toMatchObject({ kind: 'question', callId: 't1-s1-c0', question: 'First name?' });
    const turnId = await answerQuestion(h.client, sessionId, 'Ada');
    await expect
      .poll(async () => (await sessionState(h.client, sessionId)).pending, { timeout: 20_000, interval: 50 })
      .toMatchObject({ kind: 'question', callId: 't1-s2-c0', question: 'Last name?' });
    await answerQuestion(h.client, sessionId, 'Lovelace');
    const r = (await h.client.workflow.getHandle(turnId).result()) as TurnResult;
    expect(r.answer).toBe('Hello Ada Lovelace. HARNESS_OK');
  });

  it('rejects an answer addressed to a call id that is not the pending question', async () => {
    const sessionId = newSessionId();
    const config = scriptedConfig({
      steps: [askStep('Colour?'), { expect: { last_message_contains: 'green' }, content: 'Green it is. HARNESS_OK' }],
    });
    const out = await h.turn(sessionId, config, 'pick');
    expect(out.kind).toBe('waiting');
    if (out.kind !== 'waiting') return;
    const turn = h.client.workflow.getHandle(out.state.turnId);
    const refused = await turn.executeUpdate(answerUpdate, { args: [{ text: 'red', callId: 'call_wrong' }] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(((refused as Error).cause as Error).message).toMatch(/no pending question has call id call_wrong/);
    const ok = await turn.executeUpdate(answerUpdate, { args: [{ text: 'green', callId: (out.state.pending as { callId: string }).callId }] });
    expect(ok).toEqual({ accepted: true, callId: (out.state.pending as { callId: string }).callId });
    const r = (await turn.result()) as TurnResult;
    expect(r.answer).toBe('Green it is. HARNESS_OK');
    // The refused answer left no trace in the turn's history.
    const accepted = ((await turn.fetchHistory()).events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes);
    expect(accepted).toHaveLength(1);
  });
});
