/**
 * A session's own store writes ride out a store outage by time, and never fail the session:
 * the scripted model's script (the session's first store write) is retried past the three
 * attempts that once failed sessions for good, and a script that cannot be stored at all leaves
 * the session going on with it inline.
 */
import { rmSync } from 'node:fs';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemoryMessageStore, StoreUnavailableError } from '../../activities/store/message-store';
import { newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';

/** A store whose first writes of a script (a JSON text with `steps`) fail with `fail(n)` while it returns an error. */
function storeFailingScripts(fail: (n: number) => Error | undefined) {
  const store = new InMemoryMessageStore();
  let n = 0;
  return Object.assign(Object.create(store) as InMemoryMessageStore, {
    putBlobs: async (...args: Parameters<InMemoryMessageStore['putBlobs']>) => {
      const isScript = JSON.stringify(args).includes('\\"steps\\"');
      const err = isScript ? fail(n++) : undefined;
      if (err) throw err;
      return store.putBlobs(...args);
    },
  });
}

const script = { steps: [{ content: 'Hello despite the store. HARNESS_OK' }] };
const twoTurns = { steps: [...script.steps, { content: 'And again. HARNESS_OK' }] };

describe('the session store writes during an outage', () => {
  let h: TestHarness;
  let refused = 0;
  beforeAll(async () => {
    // Down for the script's first four attempts (three were all a session once got).
    const store = storeFailingScripts((n) => (n < 4 ? (refused++, new StoreUnavailableError('message store unavailable: connect ECONNREFUSED 127.0.0.1:5432')) : undefined));
    h = await startHarness({ messageStore: async () => store });
  });
  afterAll(async () => {
    await h?.stop();
    if (h?.home) rmSync(h.home, { recursive: true, force: true });
  });

  it('retries the session script write past three attempts; the session starts and its turn finishes', async () => {
    const sessionId = newSessionId('outage');
    const r = await h.finish(sessionId, scriptedConfig(script), 'hello');
    expect(r.answer).toBe('Hello despite the store. HARNESS_OK');
    expect(refused).toBe(4);
    const events = (await h.client.workflow.getHandle(sessionId).fetchHistory()).events ?? [];
    const started = events.filter((e) => e.activityTaskStartedEventAttributes?.lastFailure);
    expect(started.map((e) => Number(e.activityTaskStartedEventAttributes!.attempt))).toEqual([5]);
    expect(started[0]!.activityTaskStartedEventAttributes!.lastFailure!.applicationFailureInfo?.type).toBe('STORE_UNAVAILABLE');
    expect((await h.client.workflow.getHandle(sessionId).describe()).status.name).toBe('RUNNING');
  }, 120_000);
});

describe('a script the store will not take', () => {
  let h: TestHarness;
  beforeAll(async () => {
    // Stands for a store down past the whole time budget: the write fails for good at once.
    const store = storeFailingScripts(() => ApplicationFailure.nonRetryable('the store refused the script', 'STORE_REFUSED'));
    h = await startHarness({ messageStore: async () => store });
  });
  afterAll(async () => {
    await h?.stop();
    if (h?.home) rmSync(h.home, { recursive: true, force: true });
  });

  it('leaves the session going on with its script inline instead of failing it', async () => {
    const sessionId = newSessionId('outage-inline');
    const r = await h.finish(sessionId, scriptedConfig(twoTurns), 'hello');
    expect(r.answer).toBe('Hello despite the store. HARNESS_OK');
    const handle = h.client.workflow.getHandle(sessionId);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.some((e) => e.activityTaskFailedEventAttributes)).toBe(true);
    // The next turn carries the script inline too, and the session takes it.
    const next = await h.finish(sessionId, scriptedConfig(twoTurns), 'again');
    expect(next.answer).toBe('And again. HARNESS_OK');
  }, 120_000);
});
