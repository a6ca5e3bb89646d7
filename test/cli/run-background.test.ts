/**
 * `harness run` stays with its session while the background sub-agent its turn started runs: the
 * turn the child's answer starts (the session was idle) is followed, its answer printed after the
 * first, and run exits once no child runs. `harness chat` at its prompt follows such a turn too.
 * The built CLI against a worker on the test's Temporal.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { defineAgent } from '../../index';
import type { SessionState } from '../../deterministic/session-state';
import { startHarness, type TestHarness } from '../support/harness';
import { scriptFiles } from '../support/agent-scripts';
import { gatedFactsTool } from '../support/gated-tool';
import { spawn } from 'node:child_process';
import { cliEnv, describeResult, HARNESS_BIN, removeTempDirs, runCli, tempDir } from '../support/cli';

// The child's tool runs until the test lets it end.
const { tool: gate, waiting: gates } = gatedFactsTool();

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

/** A lead that starts a researcher in the background, and says what it found when its answer comes. */
function agents(prefix: string): string {
  const researcher = defineAgent({
    name: `${prefix}-researcher`,
    instructions: 'You research.',
    model: scriptFile({ steps: [{ tool_calls: [{ name: 'gather_facts', arguments: { topic: 'tides' } }] }, { content: 'Tides follow the moon.' }] }),
    tools: [gate],
  });
  const lead = defineAgent({
    name: `${prefix}-lead`,
    instructions: 'You delegate.',
    model: scriptFile({
      steps: [
        { tool_calls: [{ name: `agent__${prefix}-researcher`, arguments: { task: 'Research tides.' } }] },
        { content: 'Started it.' },
        { expect: { last_message_contains: 'Tides follow the moon.' }, content: 'The researcher says tides follow the moon.' },
      ],
    }),
    agents: [{ agent: researcher, background: true }],
  });
  h.declarations.add({ agents: [lead.spec, researcher.spec] });
  return lead.name;
}

const cliEnvOf = () => cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_HOME: tempDir('harness-run-background-home-'), HARNESS_TASK_QUEUE: h.taskQueue });

/** Once the first turn is done while the child runs, lets the child end; the session's id. */
async function childEnds(): Promise<string> {
  await expect.poll(() => gates.length, { timeout: 60_000, interval: 100 }).toBe(1);
  const sessionId = await findSession();
  await expect.poll(async () => (await h.client.workflow.getHandle(sessionId).query<SessionState>('state')).lastTurn?.answer, { timeout: 60_000, interval: 100 }).toBe('Started it.');
  gates.shift()!();
  return sessionId;
}

it("run follows the turn a background sub-agent's answer starts, and prints its answer", async () => {
  const lead = agents('rb');
  const env = cliEnvOf();
  const cli = runCli(['run', '--agent', lead, 'Research.'], { env, timeoutMs: 120_000 });
  const sessionId = await childEnds();
  const r = await cli;
  expect(r.code, describeResult(r)).toBe(0);
  expect(r.stdout.indexOf('Started it.')).toBeGreaterThanOrEqual(0);
  expect(r.stdout.indexOf('The researcher says tides follow the moon.')).toBeGreaterThan(r.stdout.indexOf('Started it.'));
  expect(r.stderr).toContain(`waiting for 1 background sub-agent(s) of session ${sessionId}`);
  expect(r.stderr).toContain(`session ${sessionId} · ${sessionId}/turn-2`);
  expect((await h.client.workflow.getHandle(sessionId).query<SessionState>('state')).turnCount).toBe(2);
}, 150_000);

it("chat at its prompt follows the turn a background sub-agent's answer starts, and prints its answer", async () => {
  const lead = agents('cb');
  const chat = spawn(process.execPath, [HARNESS_BIN, 'chat', '--agent', lead], { env: cliEnvOf(), cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  chat.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  chat.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const closed = new Promise<number | null>((resolve) => chat.once('close', resolve));
  chat.stdin.write('Research.\n');
  const sessionId = await childEnds();
  await expect.poll(() => stdout, { timeout: 60_000, interval: 100 }).toContain('The researcher says tides follow the moon.');
  chat.stdin.end('/exit\n');
  expect(await closed).toBe(0);
  expect(stdout.indexOf('The researcher says tides follow the moon.')).toBeGreaterThan(stdout.indexOf('Started it.'));
  expect(stderr).toContain(`session ${sessionId} · ${sessionId}/turn-2`);
}, 150_000);

/** The session the CLI started: the newest on the test's task queue that an earlier test did not start. */
const seen = new Set<string>();
async function findSession(): Promise<string> {
  for (let i = 0; i < 100; i++) {
    for await (const w of h.client.workflow.list({ query: `TaskQueue = '${h.taskQueue}' AND WorkflowType = 'sessionWorkflow'` })) {
      if (seen.has(w.workflowId)) continue;
      seen.add(w.workflowId);
      return w.workflowId;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('no session');
}
