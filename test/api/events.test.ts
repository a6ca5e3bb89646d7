/**
 * HarnessClient.events(): a turn's events followed from its history by a client that shares only
 * Temporal with the worker (its own connection and HARNESS_HOME; the worker's files, such as the
 * streamed model text, are not where it looks). A turn whose tool call waits for approval is
 * approved by id from inside the loop; a second client goes on from the approval's event and
 * gets exactly what came after it; an unknown session or turn is refused in one line.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectHarness, UserError, type HarnessClient, type HarnessEvent } from '../../index';
import { newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';

let h: TestHarness;
const clients: HarnessClient[] = [];

/** A client of the harness that is not the worker's: its own Temporal connection and home. */
async function remoteClient(): Promise<HarnessClient> {
  const home = mkdtempSync(path.join(os.tmpdir(), 'harness-events-client-'));
  const c = await connectHarness({ env: { TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_HOME: home }, taskQueue: h.taskQueue, cwd: home });
  clients.push(c);
  return c;
}

async function collect(events: AsyncIterable<HarnessEvent>): Promise<HarnessEvent[]> {
  const out: HarnessEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  for (const c of clients) await c.close();
  await h?.stop();
});

describe('events()', () => {
  it('follows a turn through an approval given by id, and goes on from an event after a reconnect without repeating or losing any', async () => {
    const client = await remoteClient();
    const sessionId = newSessionId('events');
    const config = scriptedConfig({
      steps: [{ tool_calls: [{ name: 'write_file', arguments: { path: 'notes.md', content: '# Notes\n' } }] }, { expect: { last_message_contains: 'bytes_written' }, content: 'Notes written. DONE' }],
    });
    h.declareUsed(config);
    const sent = await client.send('write the notes', { sessionId, config });
    expect(sent.turnId).toBe(`${sessionId}/turn-1`);

    const seen: HarnessEvent[] = [];
    for await (const e of sent.events()) {
      seen.push(e);
      if (e.type === 'approval_needed') await client.approve(sessionId, { callIds: [e.callId] });
    }
    expect(seen.map((e) => e.type)).toEqual(['turn_started', 'step', 'tool_call', 'approval_needed', 'approval_decided', 'tool_result', 'step', 'model_text', 'final']);
    const byType = <T extends HarnessEvent['type']>(type: T) => seen.find((e): e is Extract<HarnessEvent, { type: T }> => e.type === type)!;
    expect(byType('turn_started')).toMatchObject({ sessionId, turnId: sent.turnId, turn: 1, message: 'write the notes' });
    const call = byType('tool_call');
    expect(call).toMatchObject({ step: 1, tool: 'write_file', args: { path: 'notes.md', content: '# Notes\n' } });
    expect(byType('approval_needed')).toMatchObject({ callId: call.callId, tool: 'write_file', risk: 'write', args: { path: 'notes.md' } });
    expect(byType('approval_decided')).toMatchObject({ callId: call.callId, approved: true });
    expect(byType('approval_decided').by).toBeTruthy();
    expect(byType('tool_result')).toMatchObject({ callId: call.callId, ok: true, result: { path: 'notes.md', bytes_written: 8 } });
    expect(byType('model_text')).toMatchObject({ step: 2, text: 'Notes written. DONE' });
    expect(byType('final')).toMatchObject({ status: 'completed', terminatedBy: 'final_answer', answer: 'Notes written. DONE', steps: 2 });
    // Positions only grow, and every event names its turn.
    for (const [i, e] of seen.entries()) {
      expect(e.turnId).toBe(sent.turnId);
      if (i) expect(e.offset > seen[i - 1]!.offset || (e.offset === seen[i - 1]!.offset && e.seq > seen[i - 1]!.seq)).toBe(true);
    }

    // Another client (a reconnect) from the approval's event: exactly the events after it.
    const again = await remoteClient();
    const asked = seen.findIndex((e) => e.type === 'approval_needed');
    expect(await collect(again.events(sessionId, { from: seen[asked]! }))).toEqual(seen.slice(asked + 1));
    // By its offset and turn: the same (the approval was the only event of its history event).
    expect(await collect(again.events(sessionId, { turnId: sent.turnId, from: seen[asked]!.offset }))).toEqual(seen.slice(asked + 1));
    // From the start, and (no turn named) the session's latest turn: the same events again.
    expect(await collect(again.events(sessionId))).toEqual(seen);
    // From the final event: nothing more.
    expect(await collect(again.events(sessionId, { from: seen.at(-1)! }))).toEqual([]);
  }, 60_000);

  it('refuses an unknown session, an unknown turn and a turn of another session in one line', async () => {
    const client = await remoteClient();
    const sessionId = newSessionId('events');
    const config = scriptedConfig({ steps: [{ content: 'Hello. DONE' }] });
    const sent = await client.send('hello', { sessionId, config });
    expect((await collect(sent.events())).at(-1)).toMatchObject({ type: 'final', status: 'completed' });
    // The sent message waits for its own turn too (not enumerable, like events: the object stays plain data).
    expect(await sent.wait()).toMatchObject({ kind: 'done', result: { terminated_by: 'final_answer' } });
    expect(Object.keys(sent).sort()).toEqual(['sessionId', 'turn', 'turnId']);

    const refusal = async (events: AsyncIterable<HarnessEvent>) => {
      const err = await collect(events).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(UserError);
      expect((err as Error).message).not.toContain('\n');
      return (err as Error).message;
    };
    expect(await refusal(client.events('events-no-such-session'))).toBe('no session events-no-such-session in Temporal');
    expect(await refusal(client.events(sessionId, { turnId: 7 }))).toBe(`session ${sessionId} has no turn 7 (it has turns 1 to 1)`);
    expect(await refusal(client.events('events-no-such-session', { turnId: 'events-no-such-session/turn-1' }))).toBe('no session events-no-such-session in Temporal');
    expect(await refusal(client.events(sessionId, { turnId: 'other/turn-1' }))).toBe(`turn other/turn-1 is not of session ${sessionId}`);
    expect(await refusal(client.events(sessionId, { turnId: `${sessionId}/turn-x` }))).toBe(`${sessionId}/turn-x is not a turn id`);
    expect(await refusal(client.events(sessionId, { from: 3 }))).toBe('from needs the turn its offset is of');
  }, 60_000);
});
