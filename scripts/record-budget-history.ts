/**
 * Records a reference history of a session with budgets into test/histories/budget/: turn 1
 * waits for its turn budget before step 2, a person raises it and the turn finishes (a write
 * approved under the default policy on the way); turn 2 waits again and is stopped
 * (budget_exceeded, its work kept). CI replays it with the code of the day
 * (test/histories/replay.test.ts), so a change that breaks budget waits fails the build.
 * Usage: npm run build && node dist/scripts/record-budget-history.js [label]
 */
import { writeHistories } from './history-files';
import { runScript, withScratchHarness } from './scratch';
import { DEFAULT_LIMITS, type SessionConfig } from '../deterministic/session-config';
import { decideApprovals, endSession, sendMessage } from '../client/session-client';
import { waitForTurn } from '../client/turn-wait';
import { decideBudget } from '../client/budget-client';
import { parsePolicy } from '../deterministic/policy/schema';
import { freezePolicy } from '../deterministic/policy';

// ~2,000 characters of reply (~500 completion tokens): the next call's estimate passes 1,000 tokens.
const long = 'x'.repeat(2000);
const script = {
  steps: [
    { content: long, tool_calls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'budgeted\n' } }] },
    { content: 'Notes written.' },
    { content: long, tool_calls: [{ name: 'get_current_time', arguments: {} }] },
    { content: 'never reached' },
  ],
};

async function main(): Promise<void> {
  const label = process.argv[2] ?? 'budget';
  await withScratchHarness('record-budget', async ({ client, taskQueue, address }) => {
    const sessionId = `history-${label}`;
    const config: SessionConfig = {
      model: { provider: 'scripted', model: 'scripted', script },
      systemPrompt: 'Reference session with budgets.',
      limits: { ...DEFAULT_LIMITS, maxOutputTokens: 100, budget: { turn: { tokens: 1000 }, session: { usd: 1 } } },
      policy: freezePolicy(parsePolicy({ mode: 'ask' })),
      pricing: { model: 'scripted', price: { input: 2, output: 8 }, source: 'config' },
    };
    const t1 = await sendMessage(client, { taskQueue, sessionId, config, text: 'Write notes.txt.' });
    for (let out = await waitForTurn(client, t1.turnId); out.kind === 'waiting'; out = await waitForTurn(client, t1.turnId)) {
      if (out.state.pending?.kind === 'budget') await decideBudget(client, sessionId, { raise: { unit: 'tokens', amount: 5000 } });
      else await decideApprovals(client, sessionId, { approve: true });
    }
    const t2 = await sendMessage(client, { taskQueue, sessionId, text: 'What time is it?' });
    const waiting = await waitForTurn(client, t2.turnId);
    if (waiting.kind !== 'waiting' || waiting.state.pending?.kind !== 'budget') throw new Error(`turn 2 should wait for its budget: ${JSON.stringify(waiting)}`);
    await decideBudget(client, sessionId, { stop: true, reason: 'enough for today' });
    const stopped = await waitForTurn(client, t2.turnId);
    if (stopped.kind !== 'done' || stopped.result.terminated_by !== 'budget_exceeded') throw new Error(`turn 2 should end budget_exceeded: ${JSON.stringify(stopped)}`);
    await endSession(client, sessionId);
    await client.workflow.getHandle(sessionId).result();

    await writeHistories(client, address, label, [sessionId, `${sessionId}/turn-1`, `${sessionId}/turn-2`]);
  });
}

runScript(main);
