/**
 * A session's background sub-agents that run without waiting on a person are shown by status:
 * HarnessClient.status lists each with the step its turn is at, and `harness status` says so in
 * text and JSON; once the child's end has reached the session, none is listed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { defineAgent } from '../../index';
import { HarnessClient } from '../../api/client';
import type { TurnResult } from '../../deterministic/session';
import { startHarness, type TestHarness } from '../support/harness';
import { scriptFiles } from '../support/agent-scripts';
import { gatedFactsTool } from '../support/gated-tool';
import { cliEnv, parseJson, removeTempDirs, runCli, tempDir } from '../support/cli';

// The child's tool runs until the test lets it end, so the child is running at its first step meanwhile.
const { tool: gate, waiting: gates } = gatedFactsTool();

const dir = mkdtempSync(path.join(os.tmpdir(), 'harness-background-status-'));
const scriptFile = scriptFiles(dir);
let h: TestHarness;
let client: HarnessClient;

beforeAll(async () => {
  h = await startHarness({ tools: [gate] });
  client = new HarnessClient(h.client, { taskQueue: h.taskQueue, env: {}, cwd: dir });
});
afterAll(async () => {
  for (const open of gates.splice(0)) open();
  await h?.stop();
  rmSync(dir, { recursive: true, force: true });
  removeTempDirs();
});

it('status shows a background sub-agent running, with its step, in text and JSON, until its end reaches the session', async () => {
  const researcher = defineAgent({
    name: 'st-researcher',
    instructions: 'You research.',
    model: scriptFile({ steps: [{ tool_calls: [{ name: 'gather_facts', arguments: { topic: 'tides' } }] }, { content: 'Tides follow the moon.' }] }),
    tools: [gate],
  });
  const lead = defineAgent({
    name: 'st-lead',
    instructions: 'You delegate.',
    model: scriptFile({
      steps: [
        { tool_calls: [{ name: 'agent__st-researcher', arguments: { task: 'Research tides.' } }] },
        { content: 'Started it.' },
        { expect: { last_message_contains: 'Tides follow the moon.' }, content: 'Noted.' },
      ],
    }),
    agents: [{ agent: researcher, background: true }],
  });
  h.declarations.add({ agents: [lead.spec, researcher.spec] });
  const out = await client.run('Research.', { agent: 'st-lead' });
  expect(out.kind === 'done' && out.result.answer).toBe('Started it.');
  const childId = `${out.turnId}/agent-t1-s1-c0`;
  await expect.poll(() => gates.length, { timeout: 30_000, interval: 100 }).toBe(1);

  // A signal anyone who reaches the server can send, naming the real child with another agent path: the child's own record wins.
  await h.client.workflow.getHandle(out.sessionId).signal('backgroundStatus', { turnId: childId, status: 'running', path: ['st-lead', 'impostor'] });
  const s = await client.status(out.sessionId);
  expect(s.status).toBe('idle');
  expect(s.background).toEqual([{ turnId: childId, path: ['st-lead', 'st-researcher'], step: 1 }]);
  const env = cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_HOME: tempDir('harness-background-status-home-'), HARNESS_TASK_QUEUE: h.taskQueue });
  const text = await runCli(['status', out.sessionId], { env });
  expect(text.code).toBe(0);
  expect(text.stdout).toContain(`1 background sub-agent running: st-researcher (${childId}), step 1`);
  const json = parseJson<{ background?: unknown }>(await runCli(['status', out.sessionId, '--json'], { env }));
  expect(json.background).toEqual([{ turn_id: childId, path: ['st-lead', 'st-researcher'], step: 1 }]);

  gates.shift()!();
  const turn2 = `${out.sessionId}/turn-2`;
  await expect.poll(async () => (await client.status(out.sessionId)).turnCount, { timeout: 60_000, interval: 200 }).toBe(2);
  expect(((await h.client.workflow.getHandle(turn2).result()) as TurnResult).answer).toBe('Noted.');
  const after = await client.status(out.sessionId);
  expect(after.background).toBeUndefined();
  expect((await runCli(['status', out.sessionId], { env })).stdout).not.toContain('background sub-agent');
  await client.end(out.sessionId);
}, 120_000);

it('status shows no background sub-agent that only a signal claims: none of that id, another session\'s, a turn that is not running', async () => {
  const out = await client.run('Hello.', { model: scriptFile({ steps: [{ content: 'Hi.' }] }) });
  expect(out.kind).toBe('done');
  const session = h.client.workflow.getHandle(out.sessionId);
  for (const turnId of [`${out.turnId}/agent-forged`, 'elsewhere/turn-1/agent-t1-s1-c0', out.turnId, `${out.sessionId}/turn-1/agent-t1-s1-c0`]) {
    await session.signal('backgroundStatus', { turnId, status: 'running', path: ['lead', 'ghost'] });
  }
  // The session took the signals (history has them): status asks Temporal about each before it shows one.
  await expect.poll(async () => (await session.fetchHistory()).events?.filter((e) => e.workflowExecutionSignaledEventAttributes).length, { timeout: 30_000, interval: 200 }).toBe(4);
  expect((await client.status(out.sessionId)).background).toBeUndefined();
  const env = cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_HOME: tempDir('harness-background-status-home-'), HARNESS_TASK_QUEUE: h.taskQueue });
  const text = await runCli(['status', out.sessionId], { env });
  expect(text.code).toBe(0);
  expect(text.stdout).not.toContain('ghost');
  expect(text.stdout).not.toContain('background sub-agent');
  await client.end(out.sessionId);
}, 120_000);
