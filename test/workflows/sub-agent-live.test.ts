/**
 * A sub-agent's steps as they happen: following the parent turn (watchTurn, what the console's
 * session view, `status --follow` and the CLI's live lines read) reports the child turn's spans
 * while the child runs, nested under the call that started it and marked with the sub-agent's
 * name, not only once the parent goes on; the parent's events() tell the child's question with
 * the child turn and path of agents. Real Temporal; the sub-agent asks a question, so it
 * provably waits while the parent turn is still running.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAgent, type HarnessEvent } from '../../index';
import { HarnessClient } from '../../api/client';
import { watchTurn, type SpanChange } from '../../client/watch/live';
import { liveLine } from '../../client/watch/live-lines';
import { scriptFiles } from '../support/agent-scripts';
import { startHarness, type TestHarness } from '../support/harness';

const dir = mkdtempSync(path.join(os.tmpdir(), 'harness-sub-agent-live-'));
let h: TestHarness;
let client: HarnessClient;

const scriptFile = scriptFiles(dir);

beforeAll(async () => {
  h = await startHarness();
  client = new HarnessClient(h.client, { taskQueue: h.taskQueue, env: {}, cwd: dir });
});
afterAll(async () => {
  await h?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("following a turn whose sub-agent runs", () => {
  it("reports the child's spans while it runs, under the call, with the sub-agent's name", async () => {
    const researcher = defineAgent({
      name: 'researcher',
      description: 'Finds facts.',
      instructions: 'You are the researcher.',
      model: scriptFile({ steps: [{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Which topic?' } }] }, { expect: { last_message_contains: 'tides' }, content: 'Tides: twice a day.' }] }),
    });
    const lead = defineAgent({
      name: 'lead',
      instructions: 'You lead.',
      model: scriptFile({ steps: [{ tool_calls: [{ name: 'agent__researcher', arguments: { task: 'Find a fact.' } }] }, { content: 'Done.' }] }),
      agents: [researcher],
    });
    h.declarations.add({ agents: [lead.spec, researcher.spec] });
    const sent = await client.send('Get me a fact.', { agent: 'lead' });
    const changes: SpanChange[] = [];
    const stop = new AbortController();
    const watching = watchTurn(h.client, sent.turnId, { signal: stop.signal, onChange: (c) => changes.push(c) });

    // The child's question is reported while it waits: the parent turn has not gone on.
    await expect.poll(() => changes.some((c) => c.span.type === 'ask_user' && c.agent === 'researcher'), { timeout: 60_000, interval: 100 }).toBe(true);
    expect((await h.client.workflow.getHandle(sent.turnId).describe()).status.name).toBe('RUNNING');
    const call = changes.find((c) => c.span.type === 'tool_call' && c.span.name === 'agent__researcher')!.span;
    const childTurn = changes.find((c) => c.span.type === 'turn' && c.agent === 'researcher')!.span;
    expect(childTurn.parent_id).toBe(call.span_id);
    // The CLI's line says whose step it is.
    const step = changes.find((c) => c.agent === 'researcher' && c.span.type === 'llm_call' && c.change === 'closed')!;
    const line = liveLine(step, { color: false, escape: (t) => t, turns: false, prompting: false });
    expect(JSON.stringify(line)).toContain('researcher › step 1');

    // An app following the parent turn's events learns of the child's question, and where it is.
    let asked: HarnessEvent | undefined;
    for await (const e of sent.events()) {
      if (e.type === 'question_asked') {
        asked = e;
        break;
      }
    }
    expect(asked).toMatchObject({ type: 'question_asked', question: 'Which topic?', turnId: sent.turnId, agent: { turnId: childTurn.name, path: ['lead', 'researcher'] } });

    await client.answer(sent.sessionId, 'tides');
    await watching;
    expect(changes.some((c) => c.agent === 'researcher' && c.span.type === 'llm_call' && c.change === 'closed' && JSON.stringify(c.span.output).includes('Tides'))).toBe(true);
    expect(changes.at(-1)).toMatchObject({ change: 'closed', span: { type: 'turn', name: sent.turnId } });
    expect(changes.filter((c) => c.span.type === 'turn' && c.span.name === sent.turnId && c.change === 'closed')).toHaveLength(1);
  }, 120_000);
});
