import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPayloadConverter } from '@temporalio/common';
import { newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';
import { TURN_PATCH_SET } from '../../workflows/turn/patches';
import { decodeEvents } from '../../history/trace/events';

let h: TestHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.stop());

describe('turnWorkflow', () => {
  it('ends with final_answer when the model replies without tool calls', async () => {
    const r = await h.finish(newSessionId(), scriptedConfig({ steps: [{ content: 'Hello. HARNESS_OK' }] }), 'say hi');
    expect(r.terminated_by).toBe('final_answer');
    expect(r.answer).toBe('Hello. HARNESS_OK');
    expect(r.steps).toBe(1);
    expect(r.usage.total_tokens).toBeGreaterThan(0);
  });
});

describe('version markers', () => {
  it("a turn of today's code records one patch marker and one search-attribute update, however many patches it takes", async () => {
    const sessionId = newSessionId();
    const script = { steps: [{ tool_calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'a' } }] }, { content: 'Done. HARNESS_OK' }] };
    const r = await h.finishApproving(sessionId, scriptedConfig(script), 'write a.txt');
    expect(r.terminated_by).toBe('final_answer');
    const { events } = await h.client.workflow.getHandle(`${sessionId}/turn-1`).fetchHistory();
    const markers = events!.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch');
    const ids = markers.map((e) => defaultPayloadConverter.fromPayload<{ id: string }>(e.markerRecordedEventAttributes!.details!['patch-data']!.payloads![0]!));
    expect(ids).toEqual([{ id: TURN_PATCH_SET, deprecated: false }]);
    expect(events!.filter((e) => e.upsertWorkflowSearchAttributesEventAttributes)).toHaveLength(1);
  });

  it('a session without a host prepares its turn in a local activity: the turn waits on no activity task before its first model call', async () => {
    const sessionId = newSessionId();
    const r = await h.finish(sessionId, scriptedConfig({ steps: [{ content: 'Hello. HARNESS_OK' }] }), 'say hi');
    expect(r.terminated_by).toBe('final_answer');
    const { events } = await h.client.workflow.getHandle(`${sessionId}/turn-1`).fetchHistory();
    const decoded = decodeEvents(events!);
    expect(decoded.flatMap((e) => (e.kind === 'scheduled' ? [e.activityType] : []))).toEqual(['callModel']);
    expect(events!.filter((e) => e.activityTaskScheduledEventAttributes)).toHaveLength(0);
    const prepared = decoded.find((e) => e.kind === 'localActivity' && e.activityType === 'prepareTurn');
    // Its result is in history all the same: the tools offered, read by trace, fork and rerun.
    expect(prepared?.kind === 'localActivity' && (prepared.result as { tools?: unknown[] }).tools?.length).toBeGreaterThan(5);
    // One workflow task prepares, calls the model (a local activity too: workflows/turn/model-call.ts) and ends the turn.
    expect(events!.filter((e) => e.workflowTaskCompletedEventAttributes)).toHaveLength(1);
  });
});
