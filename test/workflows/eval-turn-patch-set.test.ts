/**
 * An eval tells its trials' turns the turn patch set in their input (patch `eval-turn-patch-set`):
 * a trial's turn records no patch marker and no search-attribute update of its own, and runs the
 * current set's code all the same (a tool call and an answer pass). The eval records the patch
 * once a run, not once a trial.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultPayloadConverter } from '@temporalio/common';
import { followEval, startEval } from '../../evals/runner/run';
import { parseSuite } from '../../evals/runner/suite';
import { workflowRuns } from '../../history/workflow-runs';
import { trialSessionId } from '../../workflows/eval/eval';
import { TURN_PATCH_SET } from '../../workflows/turn/patches';
import { newSessionId, startHarness, type TestHarness } from '../support/harness';
import { scriptedEvalConfig } from '../support/eval-scaffold';

let h: TestHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.stop());

const config = scriptedEvalConfig('Eval of the turn patch set.');

/** A workflow's patch markers (their ids, in order) and its search-attribute updates. */
async function versioning(workflowId: string): Promise<{ patches: string[]; upserts: number; input: unknown }> {
  const runs = await workflowRuns(h.client, workflowId);
  const events = runs.flatMap((r) => r.history.events ?? []);
  const patches = events.flatMap((e) => {
    const m = e.markerRecordedEventAttributes;
    if (m?.markerName !== 'core_patch') return [];
    return [defaultPayloadConverter.fromPayload<{ id: string }>(m.details!['patch-data']!.payloads![0]!).id];
  });
  const started = events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  return { patches, upserts: events.filter((e) => e.upsertWorkflowSearchAttributesEventAttributes).length, input: started && defaultPayloadConverter.fromPayload(started) };
}

it("a trial's turn takes the turn patch set from its input: no marker and no search-attribute update of its own", async () => {
  const lines = [
    { id: 'plain', input: 'Say hi.', model_script: { steps: [{ content: 'hi there' }] }, checks: [{ type: 'contains', value: 'hi there' }] },
    {
      id: 'tool',
      input: 'Look, then answer.',
      model_script: { steps: [{ tool_calls: [{ name: 'get_current_time', arguments: {} }] }, { content: 'it is late' }] },
      checks: [{ type: 'contains', value: 'it is late' }, { type: 'tool_called', name: 'get_current_time' }],
    },
    { id: 'with-file', input: 'Read it.', fixtures: { 'a.txt': 'x' }, model_script: { steps: [{ content: 'read' }] }, checks: [{ type: 'contains', value: 'read' }] },
  ].map((l) => JSON.stringify(l));
  const evalId = newSessionId('eval-set');
  await startEval(h.client, h.taskQueue, parseSuite(lines.join('\n'), 'patch-set.jsonl'), { concurrency: 3, trials: 1, config, model: 'scripted', scriptedPerCase: true }, evalId);
  const report = await followEval(h.client, evalId, () => undefined);
  expect(report.totals).toMatchObject({ trials: 3, passed_trials: 3 });

  for (const caseId of ['plain', 'tool', 'with-file']) {
    const turn = await versioning(`${trialSessionId(evalId, caseId, 1)}/turn-1`);
    expect(turn.patches).toEqual([]);
    expect(turn.upserts).toBe(0);
    expect(turn.input).toMatchObject({ patchSet: TURN_PATCH_SET });
  }
  // The eval's own marker, once for the run however many trials it starts.
  expect((await versioning(evalId)).patches.filter((p) => p === 'eval-turn-patch-set')).toHaveLength(1);
}, 180_000);
