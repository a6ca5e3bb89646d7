/**
 * An eval trial on a sandbox host: its sandbox is removed on that host's queue, where its
 * container is, not on the shared queue, where a worker of another host would remove nothing and
 * the container would be left behind. Read from the eval's history (the queue the removal was
 * scheduled on) and from the host's sandbox pool (what it removed).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { SandboxPool } from '../../activities/sandbox/pool';
import type { Sandbox } from '../../activities/sandbox/sandbox';
import { hostQueueOf } from '../../deterministic/host';
import { DEFAULT_LIMITS, type SessionConfig } from '../../deterministic/session-config';
import { followEval, startEval } from '../../evals/runner/run';
import { parseSuite } from '../../evals/runner/suite';
import { trialSessionId } from '../../workflows/eval/eval';
import { workflowRuns } from '../../history/workflow-runs';
import { DEFAULT_POLICY, newSessionId, startHarness, type TestHarness } from '../support/harness';

/** Sandboxes that answer every command at once, and say which sessions' were removed. */
const removed: string[] = [];
const sandbox: Sandbox = {
  exec: async () => ({ exitCode: 0, stdout: 'hi\n', stderr: '', truncated: false, droppedBytes: 0, timedOut: false, durationMs: 1 }),
  ensure: async () => undefined,
  remove: async () => undefined,
};
const pool = { get: () => sandbox, remove: async (sessionId: string) => void removed.push(sessionId) } as unknown as SandboxPool;

let h: TestHarness;
beforeAll(async () => {
  // This worker serves sandbox host `a`: its sessions' sandbox calls go to that host's queue.
  h = await startHarness({ sandboxes: pool, hostId: 'a' } as Parameters<typeof startHarness>[0]);
});
afterAll(async () => h?.stop());

const config: SessionConfig = {
  model: { provider: 'scripted', model: 'scripted', script: { steps: [] } },
  systemPrompt: 'Eval.',
  limits: DEFAULT_LIMITS,
  policy: DEFAULT_POLICY,
};

it("removes a trial's sandbox on the trial's sandbox host", async () => {
  const suite = parseSuite(
    JSON.stringify({
      id: 'shell',
      input: 'Say hi from the shell.',
      approvals: 'approve',
      model_script: { steps: [{ tool_calls: [{ name: 'run_shell', arguments: { command: 'echo hi' } }] }, { content: 'The shell said hi.' }] },
      checks: [{ type: 'tool_called', name: 'run_shell' }],
    }),
    'shell.jsonl',
  );
  const evalId = newSessionId('eval-host');
  await startEval(h.client, h.taskQueue, suite, { concurrency: 1, trials: 1, config, model: 'scripted', scriptedPerCase: true }, evalId);
  const report = await followEval(h.client, evalId, () => undefined);
  expect(report.totals).toMatchObject({ trials: 1, passed_trials: 1 });

  const scheduled = (await workflowRuns(h.client, evalId))
    .flatMap((r) => r.history.events ?? [])
    .map((e) => e.activityTaskScheduledEventAttributes)
    .filter((a) => a?.activityType?.name === 'closeSession');
  expect(scheduled.map((a) => a?.taskQueue?.name)).toEqual([hostQueueOf(h.taskQueue, 'a')]);
  expect(removed).toEqual([trialSessionId(evalId, 'shell', 1)]);
}, 180_000);
