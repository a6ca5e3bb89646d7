/**
 * Records a reference history of a session in text mode into test/histories/text/: a turn whose
 * calls are written as text (the envelope, a <tool_call> tag after a correction, one left
 * unreadable past the corrections: INVALID_TOOL_CALL), a write approved under the default
 * policy, and a second turn that keeps the session's mode. CI replays it with the code of the
 * day (test/histories/replay.test.ts), so a change that breaks text-mode sessions fails the build.
 * Usage: npm run build && node dist/scripts/record-text-history.js [label]
 */
import { writeHistories } from './history-files';
import { runScript, withScratchHarness } from './scratch';
import { DEFAULT_LIMITS, type SessionConfig } from '../deterministic/session-config';
import { decideApprovals, endSession, sendMessage } from '../client/session-client';
import { waitForTurn } from '../client/turn-wait';
import { parsePolicy } from '../deterministic/policy/schema';
import { freezePolicy } from '../deterministic/policy';

const envelope = (name: string, args: object) => JSON.stringify({ tool_calls: [{ name, arguments: args }] });
const broken = '{"tool_calls": [{"name": "read_file", "arguments": {"path": ';

const script = {
  steps: [
    { content: envelope('write_file', { path: 'notes.txt', content: 'value: 42\n' }) },
    { content: broken, corrected: [{ content: `<tool_call>${JSON.stringify({ name: 'read_file', arguments: { path: 'notes.txt' } })}</tool_call>` }] },
    { content: broken, corrected: [{ content: broken }, { content: '<tool_call>read_file notes.txt</tool_call>' }] },
    { expect: { last_message_contains: 'INVALID_TOOL_CALL' }, content: '{"answer": "The value is 42."}' },
    { content: envelope('get_current_time', {}) },
    { content: 'It is later now (a plain-text answer).' },
  ],
};

async function main(): Promise<void> {
  const label = process.argv[2] ?? 'text';
  await withScratchHarness('record-text', async ({ client, taskQueue, address }) => {
    const sessionId = `history-${label}`;
    const config: SessionConfig = {
      model: { provider: 'scripted', model: 'scripted', script, toolMode: 'text' },
      systemPrompt: 'Reference session in text mode.',
      limits: DEFAULT_LIMITS,
      policy: freezePolicy(parsePolicy({ mode: 'ask' })),
    };
    const t1 = await sendMessage(client, { taskQueue, sessionId, config, text: 'Write 42 to notes.txt, read it back, say the value.' });
    while ((await waitForTurn(client, t1.turnId)).kind === 'waiting') await decideApprovals(client, sessionId, { approve: true });
    const t2 = await sendMessage(client, { taskQueue, sessionId, text: 'What time is it?' });
    const done = await waitForTurn(client, t2.turnId);
    if (done.kind !== 'done' || done.result.toolMode?.mode !== 'text') throw new Error(`turn 2 did not keep text mode: ${JSON.stringify(done)}`);
    await endSession(client, sessionId);
    await client.workflow.getHandle(sessionId).result();

    await writeHistories(client, address, label, [sessionId, `${sessionId}/turn-1`, `${sessionId}/turn-2`]);
  });
}

runScript(main);
