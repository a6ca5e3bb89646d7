/**
 * Records reference histories of delegation and time into test/histories/<label>/: a session of an
 * agent whose first turn runs two read-only calls in one step (run together), sleeps in a `wait`
 * until its timer fires, and calls a sub-agent (a child turn of its own, recorded too); its second
 * turn starts a background sub-agent, sleeps, gets the sub-agent's result and a person's message
 * while it sleeps (both queued for its next step) and is woken. CI
 * replays them with the code of the day (test/histories/replay.test.ts), so a change that breaks a
 * parallel step, a sleep, a sub-agent or a steered turn in flight fails the build.
 * Usage: npm run build && node dist/scripts/record-delegation-history.js <label>
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeHistories } from './history-files';
import { runScript, withScratchHarness } from './scratch';
import { defineAgent } from '../api/define-agent';
import { endSession, sendMessage, sessionState } from '../client/session-client';
import { wakeSession } from '../client/wake-client';
import { waitForTurn } from '../client/turn-wait';
import { resolveSessionConfig } from '../config/resolve';
import { subAgentTurnId } from '../deterministic/sub-agents';

async function main(): Promise<void> {
  const label = process.argv[2];
  if (!label) throw new Error('usage: node dist/scripts/record-delegation-history.js <label> (a label no stored history has)');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'record-delegation-'));
  const scripted = (name: string, steps: unknown[]) => {
    const file = path.join(dir, `${name}.json`);
    writeFileSync(file, JSON.stringify({ steps }));
    return `scripted:${file}`;
  };
  const scout = defineAgent({ name: 'scout', description: 'Scouts ahead.', instructions: 'You are the scout.', model: scripted('scout', [{ content: 'Scouted: all clear.' }]), policy: { mode: 'auto' } });
  const researcher = defineAgent({ name: 'researcher', description: 'Finds facts.', instructions: 'You are the researcher.', model: scripted('researcher', [{ content: 'The fact is 42.' }]), policy: { mode: 'auto' } });
  const lead = defineAgent({
    name: 'lead',
    instructions: 'You are the lead.',
    model: scripted('lead', [
      { tool_calls: [{ name: 'list_files', arguments: {} }, { name: 'read_file', arguments: { path: 'missing.md' } }] },
      { tool_calls: [{ name: 'wait', arguments: { seconds: 1, reason: 'the build to finish' } }] },
      { tool_calls: [{ name: 'agent__researcher', arguments: { task: 'Find the fact.' } }] },
      { content: 'Lead done: 42.' },
      { tool_calls: [{ name: 'agent__scout', arguments: { task: 'Scout ahead.' } }] },
      { tool_calls: [{ name: 'wait', arguments: { seconds: 3600, reason: 'the review' } }] },
      { expect: { messages_contain: 'the review is in' }, content: 'Woken and told.' },
    ]),
    agents: [researcher, { agent: scout, background: true }],
    policy: { mode: 'auto' },
  });
  await withScratchHarness('record-delegation', async ({ client, taskQueue, address, declarations }) => {
    declarations.add({ agents: [lead.spec, researcher.spec, scout.spec] });
    const sessionId = `history-${label}`;
    const config = resolveSessionConfig({ agent: 'lead' }, {}, dir);
    const first = await sendMessage(client, { taskQueue, sessionId, config, text: 'Look around, wait for the build, ask the researcher.' });
    const done = await waitForTurn(client, first.turnId, { timeoutMs: 120_000 });
    if (done.kind !== 'done' || done.result.answer !== 'Lead done: 42.') throw new Error(`turn 1: ${JSON.stringify(done)}`);

    const second = await sendMessage(client, { taskQueue, sessionId, text: 'Wait for the review.' });
    // Asleep, with the scout's result given to the turn (a steer signal in its history), so it starts no turn of its own.
    const turn = client.workflow.getHandle(second.turnId);
    const steered = async () => ((await turn.fetchHistory()).events ?? []).some((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'steer');
    for (let i = 0; (await sessionState(client, sessionId)).sleeping === undefined || !(await steered()); i++) {
      if (i > 600) throw new Error("turn 2 never slept with the scout's result queued");
      await new Promise((r) => setTimeout(r, 100));
    }
    await sendMessage(client, { taskQueue, sessionId, text: 'the review is in', whileRunning: 'queue' });
    await wakeSession(client, sessionId, { reason: 'the review came early', by: 'recorder' });
    const woken = await waitForTurn(client, second.turnId, { timeoutMs: 120_000 });
    if (woken.kind !== 'done' || woken.result.answer !== 'Woken and told.') throw new Error(`turn 2: ${JSON.stringify(woken)}`);

    await endSession(client, sessionId);
    await client.workflow.getHandle(sessionId).result();
    // Call ids are the harness's own (turn, step, index): the researcher's call is the third step's first.
    const child = subAgentTurnId(first.turnId, 't1-s3-c0');
    const background = subAgentTurnId(second.turnId, 't2-s1-c0');
    await writeHistories(client, address, label, [sessionId, first.turnId, second.turnId, child, background]);
  });
}

runScript(main);
