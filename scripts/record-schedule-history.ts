/**
 * Records reference histories of schedule firings into test/histories/schedule/: a firing that
 * starts a new session (whose turn it waits for) and one that sends to that session's second
 * turn, each a scheduledMessageWorkflow started as a schedule starts it. CI replays them with the
 * code of the day (test/histories/replay.test.ts), so a change that breaks firings in flight fails.
 * Usage: npm run build && node dist/scripts/record-schedule-history.js [label]
 */
import { writeHistories } from './history-files';
import { runScript, withScratchHarness } from './scratch';
import { DEFAULT_LIMITS, type SessionConfig } from '../deterministic/session-config';
import { endSession } from '../client/session-client';
import { parsePolicy } from '../deterministic/policy/schema';
import { freezePolicy } from '../deterministic/policy';
import type { ScheduledFiring, ScheduledMessage } from '../deterministic/schedule';

async function main(): Promise<void> {
  const label = process.argv[2] ?? 'schedule';
  await withScratchHarness('record-schedule', async ({ client, taskQueue, address }) => {
    const config: SessionConfig = {
      model: { provider: 'scripted', model: 'scripted', script: { steps: [{ content: 'Report one.' }, { content: 'Report two.' }] } },
      systemPrompt: 'Reference session started by a schedule.',
      limits: DEFAULT_LIMITS,
      policy: freezePolicy(parsePolicy({ mode: 'ask' })),
    };
    const fire = async (workflowId: string, input: ScheduledMessage) =>
      (await client.workflow.execute('scheduledMessageWorkflow', { workflowId, taskQueue, args: [input] })) as ScheduledFiring;
    const first = await fire(`history-${label}-new`, { scheduleId: `history-${label}`, text: 'Write the report.', config });
    const second = await fire(`history-${label}-send`, { scheduleId: `history-${label}`, text: 'And again.', sessionId: first.sessionId });
    if (second.turnId !== `${first.sessionId}/turn-2`) throw new Error(`the second firing did not send to the first's session: ${JSON.stringify(second)}`);
    await endSession(client, first.sessionId);
    await client.workflow.getHandle(first.sessionId).result();
    await writeHistories(client, address, label, [`history-${label}-new`, `history-${label}-send`]);
  });
}

runScript(main);
