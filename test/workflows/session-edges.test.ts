/**
 * The edges of a session's bookkeeping, each on a real worker and Temporal: an end accepted while
 * the session waits to continue as new ends it; `status` shows the last answer, the fork's origin
 * and the rerun's comparison after continue-as-new; a turn whose workflow died counts what it
 * spent; a cancelled session removes its sandbox; a retry sent with the session's first task is
 * refused for what it is. Under the default policy, as users run sessions.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Docker from 'dockerode';
import { WithStartWorkflowOperation, WorkflowUpdateStage } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endSessionUpdate, refreshMcpToolsUpdate, retryTurnUpdate } from '../../deterministic/messages';
import { rootCauseMessage } from '../../deterministic/errors';
import type { SessionConfig } from '../../deterministic/session-config';
import type { SessionState } from '../../deterministic/session-state';
import { sessionState } from '../../client/session-client';
import { startForked, waitForState } from '../../client/fork-start';
import { planRerun } from '../../history/rerun';
import { loadLedger } from '../../history/ledger/load';
import { failpointFile } from '../../activities/failpoints';
import { stdioSpec } from '../support/mcp-servers';
import { until } from '../support/processes';
import { newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';

const docker = new Docker();
let h: TestHarness;
// A rerun's session is held after its turn, before its comparison, long enough to act on it idle.
const COMPARE_HOLD_MS = 15_000;

beforeAll(async () => {
  h = await startHarness({ env: { HARNESS_FAILPOINTS: `compare-rerun=${COMPARE_HOLD_MS}` } });
});
afterAll(async () => h?.stop());

/** The session's state once `ready` holds (generous: the machine may be loaded). */
async function stateWhen(sessionId: string, ready: (s: SessionState) => boolean): Promise<SessionState> {
  const s = await waitForState(h.client, sessionId, ready, 120_000);
  if (!s) throw new Error(`session ${sessionId} never reached the state waited for: ${JSON.stringify(await sessionState(h.client, sessionId).catch(String))}`);
  return s;
}

/** The session's first run and a wait for its next one (it continued as new). */
async function firstRun(sessionId: string): Promise<{ next: () => Promise<void> }> {
  const handle = h.client.workflow.getHandle(sessionId);
  const d = await handle.describe();
  const first = d.raw.workflowExecutionInfo?.firstRunId ?? d.runId;
  return { next: () => until(`${sessionId} to continue as new`, async () => (await handle.describe()).runId !== first, 120_000).then(() => undefined) };
}

/** A recorded one-step turn and the plan of its rerun, which continues as new after its first turn. */
async function recordedRerun(extra: Partial<SessionConfig> = {}): Promise<{ source: string; turnId: string; rerunId: string; plan: Awaited<ReturnType<typeof planRerun>> }> {
  const source = newSessionId('edge-src');
  const r = await h.finish(source, scriptedConfig({ steps: [{ content: 'The recorded answer. HARNESS_OK' }] }), 'answer once');
  const plan = await planRerun(h.client, r.turnId);
  plan.config = { ...plan.config, limits: { ...plan.config.limits, continueAsNewAfterEvents: 5 }, ...extra };
  h.declareUsed(plan.config);
  rmSync(failpointFile(h.home, 'compare-rerun'), { force: true });
  return { source, turnId: r.turnId, rerunId: newSessionId('edge-rerun'), plan };
}

describe('session edges', () => {
  it('shows the last answer, the fork origin and the rerun comparison after continue-as-new', async () => {
    const { turnId, rerunId, plan } = await recordedRerun();
    expect(await startForked(h.client, h.taskQueue, plan, rerunId)).toBeDefined();
    const run = await firstRun(rerunId);
    await run.next();
    const state = await stateWhen(rerunId, (s) => s.turnCount === 1 && s.status === 'idle');
    expect(state.lastTurn).toMatchObject({ turnId: `${rerunId}/turn-1`, terminated_by: 'final_answer', answer: 'The recorded answer. HARNESS_OK' });
    expect(state.fork).toMatchObject({ from: turnId, step: 1 });
    expect(state.rerun).toMatchObject({ diverged: false });
    await h.client.workflow.getHandle(rerunId).terminate('test cleanup');
  }, 300_000);

  it('ends a session whose end was accepted while it waited for a handler before continuing as new', async () => {
    // An MCP server whose listing the test holds: a refresh of the session's tools stays in flight.
    const shut = path.join(h.home, `mcp-shut-${Date.now()}`);
    const waiting = `${shut}.waiting`;
    const server = stdioSpec('gated', process.execPath, [path.join(__dirname, '..', 'support', 'mcp-gated-server.cjs'), shut, waiting], { startupTimeoutMs: 60_000 });
    const { rerunId, plan } = await recordedRerun({ mcp: { servers: [server] } });
    const handle = h.client.workflow.getHandle(rerunId);
    expect(await startForked(h.client, h.taskQueue, plan, rerunId)).toBeDefined();

    // Its turn is done and the session idles before its comparison: a refresh starts, and waits.
    await until('the rerun to reach its comparison', () => existsSync(failpointFile(h.home, 'compare-rerun')), 120_000);
    writeFileSync(shut, 'shut');
    const refresh = await handle.startUpdate(refreshMcpToolsUpdate, { args: [], waitForStage: WorkflowUpdateStage.ACCEPTED });
    await until('the refresh to list the tools', () => existsSync(waiting), 60_000);
    // Compared: past its history limit, the session now waits for the refresh to continue as new.
    await stateWhen(rerunId, (s) => s.rerun !== undefined);
    expect(await handle.executeUpdate(endSessionUpdate, { args: [{}] })).toEqual({ ended: true });
    rmSync(shut);
    await refresh.result();

    const ended = await waitForState(h.client, rerunId, (s) => s.status === 'ended', 60_000);
    expect(ended?.status, 'the end accepted before continue-as-new was dropped').toBe('ended');
    expect(await handle.result()).toMatchObject({ sessionId: rerunId, turns: 1 });
    // It ended in the run that accepted the end.
    const d = await handle.describe();
    expect(d.runId).toBe(d.raw.workflowExecutionInfo?.firstRunId ?? d.runId);
  }, 300_000);

  it('counts what a turn whose workflow died spent, in the usage and the spend its budget goes by', async () => {
    const sessionId = newSessionId('edge-died');
    const config = scriptedConfig({ steps: [{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Which branch?' } }] }, { content: 'never' }] });
    const out = await h.turn(sessionId, config, 'deploy');
    expect(out.kind).toBe('waiting');
    const turnId = `${sessionId}/turn-1`;
    await h.client.workflow.getHandle(turnId).terminate('test: the turn dies');
    const state = await stateWhen(sessionId, (s) => s.turnCount === 1 && s.status === 'idle');
    expect(state.lastTurn).toMatchObject({ turnId, terminated_by: 'failed' });
    // What `harness cost` reads from the turn's history is what the session counted.
    const ledger = await loadLedger(h.client, turnId);
    expect(ledger.total.total_tokens).toBeGreaterThan(0);
    expect(state.usage.total_tokens).toBe(ledger.byKind.model.total_tokens + ledger.byKind.correction.total_tokens);
    expect(state.spend?.tokens).toBe(ledger.total.total_tokens);
    await h.client.workflow.getHandle(sessionId).terminate('test cleanup');
  }, 120_000);

  it('removes the sandbox of a session cancelled while a turn waits', async () => {
    const sessionId = newSessionId('edge-cancel');
    const config = scriptedConfig({
      steps: [
        { tool_calls: [{ name: 'run_shell', arguments: { command: 'echo hi' } }] },
        { content: 'It said hi.' },
        { tool_calls: [{ name: 'ask_user', arguments: { question: 'Anything else?' } }] },
        { content: 'never' },
      ],
    });
    const boxes = () => docker.listContainers({ all: true, filters: { label: [`harness.session=${sessionId}`] } });
    const first = await h.finishApproving(sessionId, config, 'say hi in the shell');
    expect(first.terminated_by).toBe('final_answer');
    expect(await boxes()).toHaveLength(1);
    expect((await h.turn(sessionId, config, 'ask me something')).kind).toBe('waiting');

    const handle = h.client.workflow.getHandle(sessionId);
    await handle.cancel();
    await expect(handle.result()).rejects.toThrow();
    expect((await handle.describe()).status.name).toBe('CANCELLED');
    expect(await boxes()).toEqual([]);
  }, 180_000);

  it('refuses a retry sent with the session\'s first task for what it is, not with a ReferenceError', async () => {
    const sessionId = newSessionId('edge-retry');
    const err = await h.client.workflow
      .executeUpdateWithStart(retryTurnUpdate, {
        args: [{ turn: 1, runId: 'some-run' }],
        startWorkflowOperation: new WithStartWorkflowOperation('sessionWorkflow', {
          workflowId: sessionId,
          taskQueue: h.taskQueue,
          args: [{ sessionId, config: scriptedConfig({ steps: [{ content: 'unused' }] }) }],
          workflowIdConflictPolicy: 'FAIL',
        }),
      })
      .catch((e: unknown) => e);
    expect(rootCauseMessage(err)).toBe('the session has no turn 1');
    await h.client.workflow.getHandle(sessionId).terminate('test cleanup');
  }, 60_000);
});
