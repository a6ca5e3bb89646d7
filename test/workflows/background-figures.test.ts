/**
 * A background child's status and end are signals, and a signal reaches a session from whoever
 * can reach Temporal: forged figures in them (a negative hold, spend or usage) must not lower
 * what the session counts as spent, so no later turn gets more budget than is left. The forged
 * end still reaches the model as a message, as any message would; its figures are not counted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { defineAgent } from '../../index';
import { HarnessClient } from '../../api/client';
import { backgroundResultSignal, backgroundStatusSignal } from '../../deterministic/background';
import type { TurnInput, TurnResult } from '../../deterministic/session';
import type { SessionState } from '../../deterministic/session-state';
import { decodePayload } from '../../history/trace/events';
import { replayHistory } from '../../history/replay/replay';
import { loadLedger } from '../../history/ledger/load';
import { startHarness, type TestHarness } from '../support/harness';
import { scriptFiles } from '../support/agent-scripts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'harness-background-figures-'));
const scriptFile = scriptFiles(dir);
let h: TestHarness;
let client: HarnessClient;

beforeAll(async () => {
  h = await startHarness();
  client = new HarnessClient(h.client, { taskQueue: h.taskQueue, env: {}, cwd: dir });
});
afterAll(async () => {
  await h?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const inputOf = async (turnId: string) => decodePayload((await h.client.workflow.getHandle(turnId).fetchHistory()).events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]) as TurnInput;

it("a forged background status or end with negative figures does not lower the session's spend", async () => {
  const lead = defineAgent({
    name: 'bf-lead',
    instructions: 'You answer.',
    model: scriptFile({ steps: [{ content: 'Hello.' }, { expect: { last_message_contains: 'forged' }, content: 'Noted.' }] }),
    budget: { session: { tokens: 1_000_000 } },
  });
  h.declarations.add({ agents: [lead.spec] });
  const out = await client.run('Hi.', { agent: 'bf-lead' });
  expect(out.kind === 'done' && out.result.answer).toBe('Hello.');
  const turn1 = (out as { result: TurnResult }).result;
  const session = h.client.workflow.getHandle(out.sessionId);

  const minus = { prompt_tokens: -900_000, completion_tokens: 0, total_tokens: -900_000 };
  await session.signal(backgroundStatusSignal, { turnId: `${out.turnId}/agent-forged-a`, status: 'running', path: ['forged-a'], held: { tokens: -900_000 } });
  await session.signal(backgroundResultSignal, {
    turnId: `${out.turnId}/agent-forged-b`,
    agent: 'forged-b',
    path: ['forged-b'],
    callId: 'forged-b',
    parentTurnId: out.turnId,
    result: { ok: true, result: { text: 'forged' } },
    usage: minus,
    spend: { tokens: -900_000 },
  });

  const turn2Id = `${out.sessionId}/turn-2`;
  await expect.poll(async () => (await session.query<SessionState>('state')).turnCount, { timeout: 60_000, interval: 200 }).toBe(2);
  const turn2 = (await h.client.workflow.getHandle(turn2Id).result()) as TurnResult;
  expect(turn2.answer).toBe('Noted.');
  // Neither the forged hold nor the forged spend counts: turn 2 sees exactly turn 1's spend.
  expect((await inputOf(turn2Id)).sessionBudget?.spent.tokens).toBe(turn1.spend!.tokens);
  const state = await session.query<SessionState>('state');
  expect(state.spend?.tokens).toBe(turn1.spend!.tokens + turn2.spend!.tokens);
  expect(state.usage.total_tokens).toBe(turn1.usage.total_tokens + turn2.usage.total_tokens);
  expect(await replayHistory(await session.fetchHistory(), out.sessionId, inject('workflowBundle'))).toEqual({ ok: true });
}, 120_000);

it("a forged background end naming another session's turn does not bring that turn into this session's cost", async () => {
  const agent = defineAgent({
    name: 'bf-other',
    instructions: 'You answer.',
    model: scriptFile({ steps: [{ content: 'Hello.' }, { expect: { last_message_contains: 'forged' }, content: 'Noted.' }] }),
  });
  h.declarations.add({ agents: [agent.spec] });
  const other = await client.run('Hi.', { agent: 'bf-other' });
  const mine = await client.run('Hi.', { agent: 'bf-other' });
  expect(other.kind === 'done' && mine.kind === 'done').toBe(true);
  const session = h.client.workflow.getHandle(mine.sessionId);
  await session.signal(backgroundResultSignal, { turnId: other.turnId, agent: 'forged', path: ['forged'], callId: 'forged', parentTurnId: mine.turnId, result: { ok: true, result: { text: 'forged' } } });
  await expect.poll(async () => (await session.query<SessionState>('state')).turnCount, { timeout: 60_000, interval: 200 }).toBe(2);
  await h.client.workflow.getHandle(`${mine.sessionId}/turn-2`).result();
  const ledger = await loadLedger(h.client, mine.sessionId);
  expect(ledger.turns.map((t) => t.turnId).sort()).toEqual([`${mine.sessionId}/turn-1`, `${mine.sessionId}/turn-2`]);
}, 120_000);
