/**
 * An eval prepares its trials' turns once a run (prepareEvalTrials): a trial with nothing of its
 * own to prepare (no fixtures) runs no prepareTurn, and its scripted model's script travels with
 * each model call instead of being stored; a trial with fixtures still prepares, as before. Both
 * kinds pass, a two-step case (a tool call, then the answer) too, and the trace of a bare trial's
 * model call shows the system text, stored with the reply's chain.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { followEval, startEval } from '../../evals/runner/run';
import { parseSuite } from '../../evals/runner/suite';
import { workflowRuns } from '../../history/workflow-runs';
import { decodeEvents } from '../../history/trace/events';
import { trialSessionId } from '../../workflows/eval/eval';
import { Database } from '../../activities/memory/database';
import { newSessionId, startHarness, TEST_DATABASE_URL, type TestHarness } from '../support/harness';
import { localActivities, scriptedEvalConfig } from '../support/eval-scaffold';

let h: TestHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.stop());

const config = scriptedEvalConfig('Eval of prepared trials.');

it('prepares bare trials once a run, and a trial with fixtures itself', async () => {
  const lines = [
    { id: 'plain', input: 'Say hi.', model_script: { steps: [{ content: 'hi there' }] }, checks: [{ type: 'contains', value: 'hi there' }] },
    {
      id: 'two-steps',
      input: 'Look, then answer.',
      model_script: { steps: [{ tool_calls: [{ name: 'get_current_time', arguments: {} }] }, { content: 'nothing here' }] },
      checks: [{ type: 'contains', value: 'nothing here' }],
    },
    { id: 'with-file', input: 'Read it.', fixtures: { 'a.txt': 'x' }, model_script: { steps: [{ content: 'read' }] }, checks: [{ type: 'contains', value: 'read' }] },
  ].map((l) => JSON.stringify(l));
  const evalId = newSessionId('eval-prep');
  await startEval(h.client, h.taskQueue, parseSuite(lines.join('\n'), 'prepared.jsonl'), { concurrency: 3, trials: 1, config, model: 'scripted', scriptedPerCase: true }, evalId);
  const report = await followEval(h.client, evalId, () => undefined);
  expect(report.totals).toMatchObject({ trials: 3, passed_trials: 3 });

  // The eval asked once for what its trials share; the trial with fixtures prepared its workspace.
  const evalLocal = await localActivities(h.client, evalId);
  expect(evalLocal.filter((t) => t === 'prepareEvalTrials')).toHaveLength(1);
  expect(evalLocal.filter((t) => t === 'prepareEvalCase')).toHaveLength(1);

  // Bare trials: no prepareTurn, the model calls only; the trial with fixtures: prepareTurn first.
  const turnOf = (caseId: string) => `${trialSessionId(evalId, caseId, 1)}/turn-1`;
  expect(await localActivities(h.client, turnOf('plain'))).toEqual(['callModel']);
  const twoSteps = await localActivities(h.client, turnOf('two-steps'));
  expect(twoSteps).not.toContain('prepareTurn');
  expect(twoSteps.filter((t) => t === 'callModel')).toHaveLength(2);
  expect((await localActivities(h.client, turnOf('with-file')))[0]).toBe('prepareTurn');

  // A bare trial's script has no stored copy (its calls bring it); its system text is stored, with the reply.
  const db = Database.fromEnv(h.home, { DATABASE_URL: TEST_DATABASE_URL });
  try {
    const store = await db.messages();
    const plain = trialSessionId(evalId, 'plain', 1);
    expect((await store.getBlobs(plain, ['scripted-model-script'])).size).toBe(0);
    const withFile = trialSessionId(evalId, 'with-file', 1);
    expect((await store.getBlobs(withFile, ['scripted-model-script'])).size).toBe(1);
    const runs = await workflowRuns(h.client, turnOf('plain'));
    // A local model call reads as an activity's scheduling, its request the input.
    const call = decodeEvents(runs[0]!.history.events ?? []).find((e) => e.kind === 'scheduled' && e.activityType === 'callModel');
    const request = (call as { input?: { system?: { hash: string; text?: string } } } | undefined)?.input;
    expect(request?.system?.text).toContain('Eval of prepared trials.');
    expect((await store.getBlobs(plain, [request!.system!.hash])).get(request!.system!.hash)).toBe(request!.system!.text);
  } finally {
    await db.close();
  }
}, 180_000);
