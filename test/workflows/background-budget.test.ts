/**
 * A background sub-agent's budget, carved from its parent turn's, is held while it runs and
 * replaced by what it spent when it ends: a turn that starts one counts the carve toward its own
 * budget (its next model call would pass it: it waits for a person); a turn that starts while the
 * child runs has the session's budget spent with the carve held; the turn its end starts has it
 * spent with what the child really spent (the rest given back); the session counts the child's
 * spend once; a parent that continues as new still counts the hold. Each history replays.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { defineAgent } from '../../index';
import { HarnessClient } from '../../api/client';
import type { TurnInput, TurnResult } from '../../deterministic/session';
import type { SessionState } from '../../deterministic/session-state';
import { decodePayload } from '../../history/trace/events';
import { replayHistory } from '../../history/replay/replay';
import { startHarness, type TestHarness } from '../support/harness';
import { scriptFiles } from '../support/agent-scripts';
import { gatedFactsTool } from '../support/gated-tool';
import { factTools } from '../support/fact-tools';

// Each child's tool runs until the test lets it end.
const { tool: gate, waiting: gates } = gatedFactsTool();
// A step of many of these makes a turn's history long enough to continue as new right after it.
const { lookup } = factTools();

const dir = mkdtempSync(path.join(os.tmpdir(), 'harness-background-budget-'));
const scriptFile = scriptFiles(dir);
let h: TestHarness;
let client: HarnessClient;

beforeAll(async () => {
  h = await startHarness({ tools: [gate, lookup] });
  client = new HarnessClient(h.client, { taskQueue: h.taskQueue, env: {}, cwd: dir });
});
afterAll(async () => {
  for (const open of gates.splice(0)) open();
  await h?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const state = (sessionId: string) => h.client.workflow.getHandle(sessionId).query<SessionState>('state');
const inputOf = async (turnId: string) => decodePayload((await h.client.workflow.getHandle(turnId).fetchHistory()).events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]) as TurnInput;
const resultOf = async (turnId: string) => (await h.client.workflow.getHandle(turnId).result()) as TurnResult;
async function replays(...ids: string[]): Promise<void> {
  for (const id of ids) {
    const history = await h.client.workflow.getHandle(id).fetchHistory();
    expect(await replayHistory(history, id, inject('workflowBundle'))).toEqual({ ok: true });
  }
}
const researcher = (name: string, tokens: number) =>
  defineAgent({
    name,
    instructions: 'You research.',
    model: scriptFile({ steps: [{ tool_calls: [{ name: 'gather_facts', arguments: { topic: 'tides' } }] }, { content: 'Tides follow the moon.' }] }),
    tools: [gate],
    budget: { turn: { tokens } },
  });

describe("a background sub-agent's budget", () => {
  it("is held against the session's budget while it runs, and replaced by what it spent when its end reaches the session", async () => {
    const child = researcher('bb-researcher', 50_000);
    const lead = defineAgent({
      name: 'bb-lead',
      instructions: 'You delegate.',
      model: scriptFile({
        steps: [
          { tool_calls: [{ name: 'agent__bb-researcher', arguments: { task: 'Research tides.' } }] },
          { content: 'Started it.' },
          { expect: { last_message_contains: 'Meanwhile?' }, content: 'Still waiting.' },
          { expect: { last_message_contains: 'Tides follow the moon.' }, content: 'Noted.' },
        ],
      }),
      agents: [{ agent: child, background: true }],
      budget: { session: { tokens: 1_000_000 } },
    });
    h.declarations.add({ agents: [lead.spec, child.spec] });
    const out = await client.run('Research.', { agent: 'bb-lead' });
    expect(out.kind === 'done' && out.result.answer).toBe('Started it.');
    const turn1 = (out as { result: TurnResult }).result;
    const childId = `${out.turnId}/agent-t1-s1-c0`;
    await expect.poll(() => gates.length, { timeout: 30_000, interval: 100 }).toBe(1);
    expect((await inputOf(childId)).config.limits.budget?.turn).toEqual({ tokens: 50_000 });

    // A turn started while the child runs counts the child's carve as spent.
    const second = await client.run('Meanwhile?', { sessionId: out.sessionId });
    expect(second.kind === 'done' && second.result.answer).toBe('Still waiting.');
    const turn2 = (second as { result: TurnResult }).result;
    expect((await inputOf(second.turnId)).sessionBudget?.spent.tokens).toBe(turn1.spend!.tokens + 50_000);

    // Its end gives back what it did not spend: the next turn counts what it spent, once.
    gates.shift()!();
    const turn3Id = `${out.sessionId}/turn-3`;
    await expect.poll(async () => (await state(out.sessionId)).turnCount, { timeout: 60_000, interval: 200 }).toBe(3);
    const turn3 = await resultOf(turn3Id);
    expect(turn3.answer).toBe('Noted.');
    const spentByChild = (await resultOf(childId)).spend!.tokens;
    expect(spentByChild).toBeGreaterThan(0);
    expect(spentByChild).toBeLessThan(50_000);
    expect((await inputOf(turn3Id)).sessionBudget?.spent.tokens).toBe(turn1.spend!.tokens + turn2.spend!.tokens + spentByChild);
    expect((await state(out.sessionId)).spend?.tokens).toBe(turn1.spend!.tokens + turn2.spend!.tokens + spentByChild + turn3.spend!.tokens);
    await client.end(out.sessionId);
    await replays(out.turnId, childId, second.turnId, turn3Id, out.sessionId);
  }, 120_000);

  it("counts toward its parent turn's budget while it runs: the parent's next call that would pass it waits for a person", async () => {
    const child = researcher('bb-researcher2', 52_000);
    const lead = defineAgent({
      name: 'bb-lead2',
      instructions: 'You delegate.',
      model: scriptFile({
        steps: [
          { tool_calls: [{ name: 'agent__bb-researcher2', arguments: { task: 'Research tides.' } }] },
          // Never asked for: the turn is stopped before its second model call.
          { expect: { last_message_contains: 'Tides follow the moon.' }, content: 'Noted.' },
        ],
      }),
      agents: [{ agent: child, background: true }],
      budget: { turn: { tokens: 55_000 } },
    });
    h.declarations.add({ agents: [lead.spec, child.spec] });
    const sent = await client.send('Research.', { agent: 'bb-lead2' });
    const waiting = await client.wait(sent.turnId, { timeoutMs: 60_000 });
    expect(waiting.kind).toBe('waiting');
    const pending = (await state(sent.sessionId)).pending;
    expect(pending).toMatchObject({ kind: 'budget', scope: 'turn', unit: 'tokens', limit: 55_000 });
    expect((pending as { spent: number }).spent).toBeGreaterThan(52_000);
    await client.decideBudget(sent.sessionId, { stop: true, reason: 'enough' });
    const first = await client.wait(sent.turnId, { timeoutMs: 60_000 });
    expect(first.kind === 'done' && first.result.terminated_by).toBe('budget_exceeded');
    // The turn's own spend holds none of the child's: the session adds it when the child's end arrives.
    const childId = `${sent.turnId}/agent-t1-s1-c0`;
    await expect.poll(() => gates.length, { timeout: 30_000, interval: 100 }).toBe(1);
    gates.shift()!();
    await expect.poll(async () => (await state(sent.sessionId)).turnCount, { timeout: 60_000, interval: 200 }).toBe(2);
    const turn2 = await resultOf(`${sent.sessionId}/turn-2`);
    expect(turn2.answer).toBe('Noted.');
    const spent = [(first as { result: TurnResult }).result, await resultOf(childId), turn2].reduce((n, r) => n + r.spend!.tokens, 0);
    expect((await state(sent.sessionId)).spend?.tokens).toBe(spent);
    await client.end(sent.sessionId);
    await replays(sent.turnId, childId, `${sent.sessionId}/turn-2`, sent.sessionId);
  }, 120_000);

  it('stays counted against its parent turn after the parent continues as new, until the parent ends', async () => {
    const child = researcher('bb-researcher3', 10_000_000);
    // Step 1 starts the child and makes forty activity calls, past the run's event budget (100):
    // the turn continues as new before its second model call, which the child's hold would pass.
    const lead = defineAgent({
      name: 'bb-lead3',
      instructions: 'You delegate.',
      model: scriptFile({
        steps: [
          {
            tool_calls: [
              { name: 'agent__bb-researcher3', arguments: { task: 'Research tides.' } },
              ...Array.from({ length: 40 }, (_, i) => ({ name: 'look_fact', arguments: { topic: `t${i}` } })),
            ],
          },
          // Asked for only when the child's hold is lost.
          { content: 'Went on past the budget.' },
        ],
      }),
      tools: [lookup],
      agents: [{ agent: child, background: true }],
      limits: { turnEventBudget: 100 },
      budget: { turn: { tokens: 100_000 } },
    });
    h.declarations.add({ agents: [lead.spec, child.spec] });
    const sent = await client.send('Research.', { agent: 'bb-lead3' });
    const waiting = await client.wait(sent.turnId, { timeoutMs: 60_000 });
    expect(waiting.kind).toBe('waiting');
    // It continued as new: the run that waits began from the first's resume, which carries the hold.
    const resume = (await inputOf(sent.turnId)).resume;
    expect(resume?.backgroundCounted?.tokens).toBeGreaterThan(90_000);
    const pending = (await state(sent.sessionId)).pending;
    expect(pending).toMatchObject({ kind: 'budget', scope: 'turn', unit: 'tokens', limit: 100_000 });
    // The child was carved all the turn had left: with its hold the turn has spent its budget.
    expect((pending as { spent: number }).spent).toBe(100_000);
    await client.decideBudget(sent.sessionId, { stop: true, reason: 'enough' });
    const first = await client.wait(sent.turnId, { timeoutMs: 60_000 });
    expect(first.kind === 'done' && first.result.terminated_by).toBe('budget_exceeded');
    await expect.poll(() => gates.length, { timeout: 30_000, interval: 100 }).toBe(1);
    gates.shift()!();
    await expect.poll(async () => (await state(sent.sessionId)).turnCount, { timeout: 60_000, interval: 200 }).toBe(2);
    await client.end(sent.sessionId);
    await replays(sent.turnId, sent.sessionId);
  }, 120_000);
});
