/**
 * Streamed model text reaches a client on another machine: the worker (streamText, its own
 * HARNESS_HOME) and the client (its own Temporal connection and a different HARNESS_HOME) share
 * only Temporal and the database (DATABASE_URL). The client's events() gives model_text_delta
 * events while the call runs, whose texts concatenated are the call's model_text; a client that
 * drops mid-stream and comes back `from` the last delta it saw gets the rest, none twice, and a
 * reader of the finished turn gets the same events at the same positions. A client with no
 * database to read gets the history's events only.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectHarness, type HarnessClient, type HarnessEvent, type ModelTextDeltaEvent } from '../../index';
import { newSessionId, scriptedConfig, startHarness, TEST_DATABASE_URL, type TestHarness } from '../support/harness';

// The scripted model streams a word every 10 ms: about 3 s of text, many batched writes.
const ANSWER = `Streamed across machines: ${Array.from({ length: 300 }, (_, i) => `word${i}`).join(' ')}. DONE`;

let h: TestHarness;
const clients: HarnessClient[] = [];

/** A client on "another machine": its own Temporal connection and home; the database only if given. */
async function remoteClient(database = true): Promise<HarnessClient> {
  const home = mkdtempSync(path.join(os.tmpdir(), 'harness-deltas-client-'));
  const env = { TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_HOME: home, ...(database ? { DATABASE_URL: TEST_DATABASE_URL } : {}) };
  const c = await connectHarness({ env, taskQueue: h.taskQueue, cwd: home });
  clients.push(c);
  return c;
}

async function collect(events: AsyncIterable<HarnessEvent>): Promise<HarnessEvent[]> {
  const out: HarnessEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

const isDelta = (e: HarnessEvent): e is ModelTextDeltaEvent => e.type === 'model_text_delta';

beforeAll(async () => {
  h = await startHarness({ streamText: true });
});

afterAll(async () => {
  for (const c of clients) await c.close();
  await h?.stop();
});

describe('events() with streamed model text', () => {
  it('gives a remote client the text as it streams, resumable from any delta, ending in the whole model_text', async () => {
    const client = await remoteClient();
    const sessionId = newSessionId('deltas');
    const config = scriptedConfig({ steps: [{ content: ANSWER }] });
    h.declareUsed(config);
    const sent = await client.send('stream a long answer', { sessionId, config });

    // Drops the connection after the third delta, while the call still streams.
    const first: HarnessEvent[] = [];
    let runningAtFirstDelta: string | undefined;
    for await (const e of sent.events()) {
      first.push(e);
      if (isDelta(e) && runningAtFirstDelta === undefined) {
        runningAtFirstDelta = (await client.temporal.workflow.getHandle(sent.turnId).describe()).status.name;
      }
      if (first.filter(isDelta).length === 3) break;
    }
    // The text came while the turn ran, not after it.
    expect(runningAtFirstDelta).toBe('RUNNING');
    expect(first.map((e) => e.type)).toEqual(['turn_started', 'step', 'model_text_delta', 'model_text_delta', 'model_text_delta']);

    // Back, from the last delta seen: the rest, then the whole text and the end.
    const rest = await collect(sent.events({ from: first.at(-1)! }));
    const seen = [...first, ...rest];
    expect(rest.filter((e) => !isDelta(e)).map((e) => e.type)).toEqual(['model_text', 'final']);
    const deltas = seen.filter(isDelta);
    expect(deltas.length).toBeGreaterThan(3);
    // Batched: far fewer pieces than the words the model streamed.
    expect(deltas.length).toBeLessThan(ANSWER.split(' ').length / 2);
    for (const d of deltas) expect(d).toMatchObject({ turnId: sent.turnId, step: 1, callIndex: 0, attempt: 1 });
    const text = seen.find((e) => e.type === 'model_text');
    expect(text).toMatchObject({ step: 1, text: ANSWER });
    expect(deltas.map((d) => d.text).join('')).toBe(ANSWER);
    expect(seen.at(-1)).toMatchObject({ type: 'final', status: 'completed', answer: ANSWER });
    // Positions only grow: the deltas sit between the history events they came between.
    for (const [i, e] of seen.entries()) {
      if (i) expect(e.offset > seen[i - 1]!.offset || (e.offset === seen[i - 1]!.offset && e.seq > seen[i - 1]!.seq), `event ${i}`).toBe(true);
    }

    // The finished turn read again by another client: the same events at the same positions.
    const again = await remoteClient();
    expect(await collect(again.events(sessionId))).toEqual(seen);
    const mid = seen.indexOf(deltas[5]!);
    expect(await collect(again.events(sessionId, { from: seen[mid]! }))).toEqual(seen.slice(mid + 1));

    // No database to read: history's events only, the text whole.
    const blind = await remoteClient(false);
    expect((await collect(blind.events(sessionId))).map((e) => e.type)).toEqual(['turn_started', 'step', 'model_text', 'final']);
  }, 60_000);
});
