/**
 * HarnessClient.events() of a sub-agent's turn (`<turnId>/agent-<callId>`): its own steps, calls
 * and answer, read from its history; an unknown or malformed child id is refused in one line.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAgent, type HarnessEvent } from '../../index';
import { HarnessClient } from '../../api/client';
import { startHarness, type TestHarness } from '../support/harness';
import { factTools } from '../support/fact-tools';
import { scriptFiles } from '../support/agent-scripts';

const { lookup } = factTools();

const dir = mkdtempSync(path.join(os.tmpdir(), 'harness-sub-agent-events-'));
let h: TestHarness;
let client: HarnessClient;

beforeAll(async () => {
  h = await startHarness({ tools: [lookup] });
  client = new HarnessClient(h.client, { taskQueue: h.taskQueue, env: {}, cwd: dir });
});
afterAll(async () => {
  await h?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function collect(events: AsyncIterable<HarnessEvent>): Promise<HarnessEvent[]> {
  const out: HarnessEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

describe("events() of a sub-agent's turn", () => {
  it('follows the child turn by its id; an unknown or malformed one is one line', async () => {
    const scriptFile = scriptFiles(dir);
    const researcher = defineAgent({
      name: 'researcher',
      instructions: 'You are the researcher.',
      model: scriptFile({ steps: [{ tool_calls: [{ name: 'look_fact', arguments: { topic: 'answer' } }] }, { content: 'The answer is 42.' }] }),
      tools: [lookup],
    });
    const lead = defineAgent({
      name: 'lead',
      instructions: 'You lead.',
      model: scriptFile({ steps: [{ tool_calls: [{ name: 'agent__researcher', arguments: { task: 'Find the answer.' } }] }, { content: 'Done: 42.' }] }),
      agents: [researcher],
    });
    h.declarations.add({ agents: [lead.spec, researcher.spec] });
    const out = await client.run('What is the answer?', { agent: 'lead' });
    expect(out.kind).toBe('done');
    const child = `${out.turnId}/agent-t1-s1-c0`;

    const seen = await collect(client.events(out.sessionId, { turnId: child }));
    expect(seen.map((e) => e.type)).toEqual(['turn_started', 'step', 'tool_call', 'tool_result', 'step', 'model_text', 'final']);
    expect(seen.find((e) => e.type === 'tool_call')).toMatchObject({ tool: 'look_fact' });
    expect(seen.at(-1)).toMatchObject({ type: 'final', answer: 'The answer is 42.' });

    await expect(collect(client.events(out.sessionId, { turnId: `${out.turnId}/agent-t1-s9-c0` }))).rejects.toThrow(`no sub-agent turn ${out.turnId}/agent-t1-s9-c0 in Temporal`);
    await expect(collect(client.events(out.sessionId, { turnId: `${out.turnId}/agent-` }))).rejects.toThrow(`${out.turnId}/agent- is not a turn id`);
  }, 120_000);
});
