/**
 * The background children a session's history says run (what `status` shows when no worker
 * answers): those carried into the run and those that said they run since, less those whose end
 * arrived (a status after its end does not bring one back); `waiting` while the last status waits.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { backgroundRunning } from '../../client/background-waits';
import type { HistoryEvent } from '../../history/trace/events';

const signal = (signalName: string, input: unknown) => ({ workflowExecutionSignaledEventAttributes: { signalName, input: { payloads: [defaultPayloadConverter.toPayload(input)] } } }) as HistoryEvent;
const started = (carry: unknown) => ({ workflowExecutionStartedEventAttributes: { input: { payloads: [defaultPayloadConverter.toPayload({ sessionId: 's', carry })] } } }) as HistoryEvent;

describe('backgroundRunning', () => {
  it('lists the carried children and those started since, less the ended, with their waits', () => {
    const events = [
      started({ background: { running: [{ turnId: 's/turn-1/agent-a', path: ['lead', 'a'] }], taken: [] } }),
      signal('backgroundStatus', { turnId: 's/turn-2/agent-b', status: 'running', path: ['lead', 'b'] }),
      signal('backgroundStatus', { turnId: 's/turn-2/agent-c', status: 'running', path: ['lead', 'c'] }),
      signal('backgroundStatus', { turnId: 's/turn-2/agent-c', status: 'waiting_for_approval', path: ['lead', 'c'], pending: { kind: 'approvals', calls: [] } }),
      signal('backgroundResult', { turnId: 's/turn-1/agent-a', result: { ok: true } }),
      signal('backgroundStatus', { turnId: 's/turn-1/agent-a', status: 'running', path: ['lead', 'a'] }),
    ];
    expect(backgroundRunning(events)).toEqual([
      { turnId: 's/turn-2/agent-b', path: ['lead', 'b'] },
      { turnId: 's/turn-2/agent-c', path: ['lead', 'c'], waiting: true },
    ]);
  });
});
