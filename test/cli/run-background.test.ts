/**
 * `harness run` stays with its session while the background sub-agent its turn started runs: the
 * turn the child's answer starts (the session was idle) is followed, its answer printed after the
 * first, and run exits once no child runs. The built CLI against a worker on the test's Temporal.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineTool } from '../../index';
import type { SessionState } from '../../deterministic/session-state';
import { startHarness, type TestHarness } from '../support/harness';
import { scriptFiles } from '../support/agent-scripts';
import { cliEnv, describeResult, removeTempDirs, runCli, tempDir } from '../support/cli';

// The child's tool runs until the test lets it end.
const gates: Array<() => void> = [];
const gate = defineTool({
  name: 'gather_facts',
  description: 'Gather facts.',
  schema: z.object({ topic: z.string() }),
  risk: 'read_only',
  run: async ({ topic }) => {
    await new Promise<void>((resolve) => gates.push(resolve));
    return { facts: `facts on ${topic}` };
  },
});

const dir = mkdtempSync(path.join(os.tmpdir(), 'harness-run-background-'));
const scriptFile = scriptFiles(dir);
let h: TestHarness;

beforeAll(async () => {
  h = await startHarness({ tools: [gate] });
});
afterAll(async () => {
  for (const open of gates.splice(0)) open();
  await h?.stop();
  rmSync(dir, { recursive: true, force: true });
  removeTempDirs();
});

it("run follows the turn a background sub-agent's answer starts, and prints its answer", async () => {
  const researcher = defineAgent({
    name: 'rb-researcher',
    instructions: 'You research.',
    model: scriptFile({ steps: [{ tool_calls: [{ name: 'gather_facts', arguments: { topic: 'tides' } }] }, { content: 'Tides follow the moon.' }] }),
    tools: [gate],
  });
  const lead = defineAgent({
    name: 'rb-lead',
    instructions: 'You delegate.',
    model: scriptFile({
      steps: [
        { tool_calls: [{ name: 'agent__rb-researcher', arguments: { task: 'Research tides.' } }] },
        { content: 'Started it.' },
        { expect: { last_message_contains: 'Tides follow the moon.' }, content: 'The researcher says tides follow the moon.' },
      ],
    }),
    agents: [{ agent: researcher, background: true }],
  });
  h.declarations.add({ agents: [lead.spec, researcher.spec] });
  const env = cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_HOME: tempDir('harness-run-background-home-'), HARNESS_TASK_QUEUE: h.taskQueue });
  const cli = runCli(['run', '--agent', 'rb-lead', 'Research.'], { env, timeoutMs: 120_000 });
  // The first turn is done while the child runs; then the child may end.
  await expect.poll(() => gates.length, { timeout: 60_000, interval: 100 }).toBe(1);
  const sessionId = await findSession();
  await expect.poll(async () => (await h.client.workflow.getHandle(sessionId).query<SessionState>('state')).lastTurn?.answer, { timeout: 60_000, interval: 100 }).toBe('Started it.');
  gates.shift()!();
  const r = await cli;
  expect(r.code, describeResult(r)).toBe(0);
  expect(r.stdout.indexOf('Started it.')).toBeGreaterThanOrEqual(0);
  expect(r.stdout.indexOf('The researcher says tides follow the moon.')).toBeGreaterThan(r.stdout.indexOf('Started it.'));
  expect(r.stderr).toContain(`waiting for 1 background sub-agent(s) of session ${sessionId}`);
  expect(r.stderr).toContain(`session ${sessionId} · ${sessionId}/turn-2`);
  expect((await h.client.workflow.getHandle(sessionId).query<SessionState>('state')).turnCount).toBe(2);
}, 150_000);

/** The session the CLI started: the one running on the test's task queue. */
async function findSession(): Promise<string> {
  for await (const w of h.client.workflow.list({ query: `TaskQueue = '${h.taskQueue}' AND WorkflowType = 'sessionWorkflow'` })) return w.workflowId;
  throw new Error('no session');
}
