/**
 * `harness replay <id>`: every run of a session and of its turns replays against the workflow
 * code; a deliberately changed workflow bundle is caught, with the divergence told in words.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowBundleOptions } from '../../machine/workflow-bundle';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { replayWorkflows, reportLines, type ReplayReport } from '../../history/replay/report';
import { DEFAULT_POLICY, newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';
import { cliEnv, describeResult, parseJson, removeTempDirs, ROOT, runCli, stackLines, tempDir } from '../support/cli';
import { freezePolicy } from '../../deterministic/policy';
import { parsePolicy } from '../../deterministic/policy/schema';

// Turn 1: three local tool calls in as many steps, over a small event budget (so it continues
// as new: several runs). Turn 2: http_request, a tool run as a regular activity.
const script = {
  steps: [
    { tool_calls: [{ name: 'list_files', arguments: {} }] },
    { tool_calls: [{ name: 'get_current_time', arguments: {} }] },
    { tool_calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'a' } }] },
    { content: 'Turn one done.' },
    { tool_calls: [{ name: 'http_request', arguments: { url: 'http://127.0.0.1:9/' } }] },
    { content: 'Turn two done.' },
  ],
};

let h: TestHarness;
let dir: string;
let env: NodeJS.ProcessEnv;
const sessionId = newSessionId('replay');
const cli = (args: string[]) => runCli(args, { env, cwd: dir, timeoutMs: 90_000 });

beforeAll(async () => {
  h = await startHarness();
  dir = tempDir('harness-cli-replay-');
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(dir, 'home') });
  // Turn 1 passes the budget before its last step (several runs); turn 2 stays within it (one run).
  // The default policy with one rule of the user's own: http_request is allowed, so turn 2 asks
  // nothing; turn 1's write asks and the person approves it.
  const policy = freezePolicy(parsePolicy({ rules: [{ id: 'allow-fetch', tool: 'http_request', decision: 'allow' }] }));
  const config = scriptedConfig(script, { turnEventBudget: 45 }, policy);
  expect(await h.finishApproving(sessionId, config, 'Look around.')).toMatchObject({ answer: 'Turn one done.', asked: ['write_file: {"path":"a.txt","content":"a"}'] });
  expect(await h.finishApproving(sessionId, config, 'Fetch something.')).toMatchObject({ answer: 'Turn two done.', asked: [] });
});
afterAll(async () => {
  await h?.stop();
  removeTempDirs();
});

describe('harness replay', () => {
  it('replays every run of a session (still running) and of its two turns: all OK, exit 0', async () => {
    const r = await cli(['replay', sessionId, '--json']);
    expect(r.code, describeResult(r)).toBe(0);
    const out = parseJson<ReplayReport>(r);
    expect(out.ok).toBe(true);
    const ids = out.runs.map((x) => x.workflow_id);
    expect(ids[0]).toBe(sessionId);
    expect(ids.filter((id) => id === `${sessionId}/turn-1`).length, 'turn 1 continued as new').toBeGreaterThan(1);
    expect(ids.at(-1)).toBe(`${sessionId}/turn-2`);
    for (const run of out.runs) {
      expect(Object.keys(run).sort()).toEqual(['ok', 'run_id', 'workflow_id']);
      expect(run.ok).toBe(true);
    }
    expect(new Set(out.runs.map((x) => x.run_id)).size).toBe(out.runs.length);

    const text = await cli(['replay', `${sessionId}/turn-2`]);
    expect(text.code, describeResult(text)).toBe(0);
    expect(text.stdout.trim()).toBe(`turn 2 (${sessionId}/turn-2), run 1 of 1: OK`);
  });

  it('the check bites: a workflow change without patched() is reported with the turn, the event and the calls', async () => {
    // The changed code: http_request no longer runs as an activity (as if it had moved into the workflow).
    const { code } = await bundleWorkflowCode({
      ...workflowBundleOptions(),
      logger: { info() {}, warn() {}, error: console.error, debug() {}, trace() {}, log() {} },
      webpackConfigHook: (config) => {
        const edit = { from: "if (def.runsIn !== 'workflow') {", to: "if (def.runsIn !== 'workflow' && def.name !== 'http_request') {" };
        config.module?.rules?.push({ test: /workflows[\\/]turn[\\/]loop\.ts$/, enforce: 'pre', use: [{ loader: path.join(ROOT, 'test', 'support', 'edit-source-loader.cjs'), options: edit }] });
        return config;
      },
    });
    const changed = path.join(dir, 'changed-workflow-bundle.js');
    writeFileSync(changed, code);

    const real = await replayWorkflows(h.client, sessionId, inject('workflowBundle'));
    expect(real.ok, reportLines(real).join('\n')).toBe(true);

    const report = await replayWorkflows(h.client, sessionId, changed);
    expect(report.ok).toBe(false);
    const bad = report.runs.filter((r) => !r.ok);
    expect(bad.map((r) => r.workflow_id)).toEqual([`${sessionId}/turn-2`]);
    const d = bad[0]!.divergence!;
    // The code went on to the next model call, which runs as a local activity: Core names no command for the event.
    expect(d).toMatchObject({
      event_type: 'ActivityTaskScheduled',
      history: 'a tool call (http_request) of step 1',
      code: 'scheduled nothing there (it ran a local activity, such as a quick model call, or it has fewer steps than the history)',
    });
    expect(d.detail).toMatch(/No command scheduled for event.*ActivityTaskScheduled/);
    // The event named is the one that scheduled the http_request call.
    const history = await h.client.workflow.getHandle(`${sessionId}/turn-2`, bad[0]!.run_id).fetchHistory();
    const event = history.events!.find((e) => Number(e.eventId) === d.event_id);
    expect(event?.activityTaskScheduledEventAttributes?.activityType?.name).toBe('executeTool');

    const lines = reportLines(report);
    expect(lines.filter((l) => l.endsWith(': OK')).length).toBe(report.runs.length - 1);
    expect(lines.at(-1)).toContain(
      `turn 2 (${sessionId}/turn-2), run 1 of 1: diverges at event ${d.event_id} (ActivityTaskScheduled): the history holds a tool call (http_request) of step 1; the code scheduled nothing there (it ran a local activity, such as a quick model call, or it has fewer steps than the history)`,
    );
  });

  it('a session under the default policy (a call asked and approved) replays OK', async () => {
    const asked = newSessionId('replay-default');
    const script = { steps: [{ tool_calls: [{ name: 'write_file', arguments: { path: 'b.txt', content: 'b' } }] }, { content: 'Written.' }] };
    const r = await h.finishApproving(asked, scriptedConfig(script, {}, DEFAULT_POLICY), 'write b.txt');
    expect(r.asked).toHaveLength(1);
    const out = await cli(['replay', asked, '--json']);
    expect(out.code, describeResult(out)).toBe(0);
    expect(parseJson<ReplayReport>(out).runs.every((x) => x.ok)).toBe(true);
  });

  it('an unknown id is one error line with a hint, exit 1; a malformed one a usage error', async () => {
    const r = await cli(['replay', 'no-such-session-here']);
    expect(r.code, describeResult(r)).toBe(1);
    expect(r.errLines).toEqual(['error: no session or turn named no-such-session-here', 'hint: list sessions with `harness sessions`; a turn id looks like <session>/turn-1']);
    expect(stackLines(r.stderr)).toEqual([]);
    expect(r.stdout).toBe('');

    const bad = await cli(['replay', 'a/b']);
    expect(bad.code, describeResult(bad)).toBe(2);
    expect(bad.errLines[0]).toMatch(/^error: .*turn id/);
  });
});
