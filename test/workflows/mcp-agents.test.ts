/**
 * MCP server processes and agents, through real Temporal under the default policy (the server's
 * own `decision: allow` rule lets its calls run): a shareable stateful server (a key/value map in
 * memory) is shared by the sessions of one agent and never seen by another agent's; a sub-agent's
 * MCP tools reach its child turn by reference (its history holds the list's hash, not its
 * schemas) and the child reads them back to validate and run its call.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAgent } from '../../index';
import { HarnessClient } from '../../api/client';
import type { TurnInput, TurnResult } from '../../deterministic/session';
import { decodePayload } from '../../history/trace/events';
import { scriptFiles } from '../support/agent-scripts';
import { newSessionId, startHarness, type TestHarness } from '../support/harness';
import { toolResults } from '../support/watched-turn';

const KV = path.join(__dirname, '..', 'support', 'mcp-kv-server.cjs');
const kv = { command: process.execPath, args: [KV], shareable: true, decision: 'allow' as const };
const dir = mkdtempSync(path.join(os.tmpdir(), 'harness-mcp-agents-'));
let h: TestHarness;
let client: HarnessClient;

const scriptFile = scriptFiles(dir);
const call = (name: string, args: unknown) => ({ tool_calls: [{ name, arguments: args }] });

/** An agent whose one turn makes one call of the kv server and answers. */
function kvAgent(name: string, tool: 'put' | 'get', args: Record<string, string>) {
  return defineAgent({ name, instructions: `You are ${name}.`, model: scriptFile({ steps: [call(`mcp__kv__${tool}`, args), { content: 'done' }] }), mcpServers: { kv } });
}

/** What the kv server answered to the session's one call. */
async function answered(agent: string): Promise<string> {
  const out = await client.run('go', { agent, sessionId: newSessionId(`mcp-${agent}`) });
  expect(out.kind).toBe('done');
  const r = await h.complete(out.result!);
  return JSON.stringify(toolResults(r.messages ?? [])[0]);
}

beforeAll(async () => {
  h = await startHarness();
  client = new HarnessClient(h.client, { taskQueue: h.taskQueue, env: {}, cwd: dir });
});
afterAll(async () => {
  await h?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('MCP servers and agents', () => {
  it('a shareable server is shared by the sessions of one agent, never with another agent', async () => {
    const writer = kvAgent('support-writer', 'put', { key: 'ticket', value: 'T-1' });
    h.declarations.add({ agents: [writer.spec] });
    expect(await answered('support-writer')).toContain('stored ticket');
    // Another session of the same agent reads what the first stored: one process serves both.
    const again = defineAgent({ name: 'support-writer', instructions: 'You are support-writer.', model: scriptFile({ steps: [call('mcp__kv__get', { key: 'ticket' }), { content: 'done' }] }), mcpServers: { kv } });
    h.declarations.add({ agents: [again.spec] });
    expect(await answered('support-writer')).toContain('ticket=T-1');
    const other = kvAgent('billing', 'get', { key: 'ticket' });
    h.declarations.add({ agents: [other.spec] });
    expect(await answered('billing')).toContain('ticket is not set');
  }, 180_000);

  it("a sub-agent's MCP tools reach its child turn by reference, and its call runs", async () => {
    const clerk = defineAgent({
      name: 'clerk',
      description: 'Files things.',
      instructions: 'You are the clerk.',
      model: scriptFile({ steps: [call('mcp__kv__put', { key: 'filed', value: 'yes' }), { content: 'Filed.' }] }),
      mcpServers: { kv },
    });
    const lead = defineAgent({
      name: 'lead',
      instructions: 'You lead.',
      model: scriptFile({ steps: [call('agent__clerk', { task: 'File it.' }), { expect: { last_message_contains: 'Filed.' }, content: 'Done.' }] }),
      agents: [clerk],
    });
    h.declarations.add({ agents: [lead.spec, clerk.spec] });
    const out = await client.run('File it', { agent: 'lead' });
    expect(out.kind).toBe('done');
    const r = await h.complete(out.result!);
    expect([r.terminated_by, r.answer]).toEqual(['final_answer', 'Done.']);
    const childId = `${out.turnId}/agent-${r.toolCalls[0]!.callId}`;
    const child = (await h.client.workflow.getHandle(childId).result()) as TurnResult;
    expect(child.toolCalls.map((c) => [c.name, c.ok])).toEqual([['mcp__kv__put', true]]);
    const events = (await h.client.workflow.getHandle(childId).fetchHistory()).events!;
    const input = decodePayload(events[0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]) as TurnInput;
    expect(input.mcpTools).toMatchObject({ tools: [], stored: true });
    expect(events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'loadMcpTools')).toHaveLength(1);
  });
});
