/**
 * The writer of a model call's streamed text: pieces batched into few writes (by time, or at once
 * past a size), one write in flight, a call capped in bytes without splitting a character, the
 * rest stored when the call ends; a store that fails, refuses or hangs costs the call nothing (no
 * throw, a bounded close); the worker's sink sweeps stale rows at its first call only.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cutToBytes, ModelStreamSink, ModelStreamWriter, type StreamLimits } from '../../../activities/model/stream-writer';
import { InMemoryModelStreams, type ModelStreams, type StreamCall } from '../../../activities/store/model-streams';

const CALL: StreamCall = { sessionId: 's-1', turnId: 's-1/turn-1', step: 1, callIndex: 0, attempt: 1 };
const LIMITS: StreamLimits = { flushMs: 100, flushBytes: 64, maxBytes: 200, closeWaitMs: 1_000 };

/** A store that records each append and answers when the test lets it. */
class RecordingStreams implements ModelStreams {
  readonly appends: Array<{ text: string; seq: number | undefined }> = [];
  private readonly memory = new InMemoryModelStreams();
  mode: 'ok' | 'fail' | 'hang' | 'taken' = 'ok';
  sweeps = 0;

  async append(call: StreamCall, text: string, seq: number | undefined): Promise<number | undefined> {
    this.appends.push({ text, seq });
    if (this.mode === 'fail') throw new Error('connection terminated unexpectedly');
    if (this.mode === 'hang') return new Promise(() => undefined);
    if (this.mode === 'taken') return undefined;
    return this.memory.append(call, text, seq);
  }

  async sweep(): Promise<number> {
    this.sweeps++;
    return 0;
  }

  /** What a reader reads back. */
  async text(): Promise<string> {
    return (await this.memory.read(CALL.turnId, CALL.step, CALL.callIndex, 0)).map((c) => c.text).join('');
  }
}

const settle = async () => {
  for (let i = 0; i < 10; i++) await vi.advanceTimersByTimeAsync(0);
};

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the stream writer', () => {
  it('batches the pieces of a flush interval into one write, numbered on from the first', async () => {
    const store = new RecordingStreams();
    const w = new ModelStreamWriter(async () => store, CALL, LIMITS);
    for (const word of ['a ', 'b ', 'c ', 'd ']) w.write(word);
    await settle();
    expect(store.appends).toEqual([]); // nothing before the interval
    await vi.advanceTimersByTimeAsync(100);
    expect(store.appends).toEqual([{ text: 'a b c d ', seq: undefined }]);
    w.write('e ');
    w.write('f');
    await vi.advanceTimersByTimeAsync(100);
    expect(store.appends[1]).toEqual({ text: 'e f', seq: 1 });
    w.write('g');
    await w.close();
    expect(store.appends).toHaveLength(3);
    expect(await store.text()).toBe('a b c d e fg');
  });

  it('writes at once past flushBytes, never two writes in flight, and what came meanwhile next', async () => {
    const store = new RecordingStreams();
    const w = new ModelStreamWriter(async () => store, CALL, LIMITS);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const append = store.append.bind(store);
    store.append = async (...args) => {
      await gate;
      return append(...args);
    };
    w.write('x'.repeat(64)); // the size: no waiting for the interval
    await settle();
    w.write('y'.repeat(70)); // past the size again, but the first is in flight
    await vi.advanceTimersByTimeAsync(500);
    expect(store.appends).toHaveLength(0); // the first waits at the gate; the second waits for it
    release();
    await settle();
    await settle();
    expect(store.appends.map((a) => a.text)).toEqual(['x'.repeat(64), 'y'.repeat(70)]);
    await w.close();
    expect(await store.text()).toBe('x'.repeat(64) + 'y'.repeat(70));
  });

  it('stores at most maxBytes of a call, never half a character', async () => {
    const store = new RecordingStreams();
    const w = new ModelStreamWriter(async () => store, CALL, { ...LIMITS, maxBytes: 10 });
    w.write('abcdefgh'); // 8 bytes
    w.write('éé'); // 2 bytes each: only one fits
    w.write('more');
    await w.close();
    expect(await store.text()).toBe('abcdefghé');
    expect(cutToBytes('a😀b', 4)).toBe('a'); // the emoji's 4 bytes do not fit after 'a'
    expect(cutToBytes('a😀b', 5)).toBe('a😀');
    expect(cutToBytes('abc', 0)).toBe('');
  });

  it('a store that fails stops the stream quietly: no throw, later pieces dropped', async () => {
    const store = new RecordingStreams();
    store.mode = 'fail';
    const w = new ModelStreamWriter(async () => store, CALL, LIMITS);
    w.write('first');
    await vi.advanceTimersByTimeAsync(100);
    expect(store.appends).toHaveLength(1);
    store.mode = 'ok';
    expect(() => w.write('second')).not.toThrow();
    await w.close();
    expect(store.appends).toHaveLength(1); // a hole would follow: nothing more is written
  });

  it('a database that cannot be opened, or a place another attempt took, is no failure either', async () => {
    const opener = new ModelStreamWriter(() => Promise.reject(new Error('ECONNREFUSED')), CALL, LIMITS);
    opener.write('text');
    await expect(opener.close()).resolves.toBeUndefined();
    const store = new RecordingStreams();
    store.mode = 'taken';
    const w = new ModelStreamWriter(async () => store, CALL, LIMITS);
    w.write('one');
    await vi.advanceTimersByTimeAsync(100);
    w.write('two');
    await w.close();
    expect(store.appends.map((a) => a.text)).toEqual(['one']);
  });

  it('close waits at most closeWaitMs for a store that hangs', async () => {
    const store = new RecordingStreams();
    store.mode = 'hang';
    const w = new ModelStreamWriter(async () => store, CALL, LIMITS);
    w.write('text');
    let closed = false;
    void w.close().then(() => (closed = true));
    await vi.advanceTimersByTimeAsync(LIMITS.closeWaitMs - 1);
    expect(closed).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(closed).toBe(true);
  });
});

describe("the worker's sink", () => {
  it('sweeps stale rows at its first call, not at every call', async () => {
    const store = new RecordingStreams();
    const sink = new ModelStreamSink(async () => store, LIMITS);
    sink.writer(CALL);
    sink.writer({ ...CALL, step: 2 });
    await settle();
    expect(store.sweeps).toBe(1);
    await vi.advanceTimersByTimeAsync(16 * 60_000);
    sink.writer({ ...CALL, step: 3 });
    await settle();
    expect(store.sweeps).toBe(2);
  });
});
