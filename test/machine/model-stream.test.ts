/**
 * The stream side channel's files: a writer's text read back by a tail as it grows (a UTF-8
 * character cut between reads waits for its other bytes), the file kept a moment after the reply
 * so a watcher reads its end, then removed; files a killed worker left are swept; a file that
 * cannot be written is no failure.
 */
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { STREAM_LINGER_MS, StreamTail, StreamWriter, streamFile, sweepStreams } from '../../machine/model-stream';

const home = () => mkdtempSync(path.join(os.tmpdir(), 'harness-streams-'));

describe('stream files', () => {
  it('a tail reads what the writer appended since its last read, whole characters only', () => {
    const file = streamFile(home(), 's/turn-1', 2, 0);
    const w = new StreamWriter(file);
    const tail = new StreamTail(file);
    expect(tail.read()).toBe(''); // no file yet
    w.write('héllo ');
    expect(tail.read()).toBe('héllo ');
    w.write('world ');
    expect(tail.read()).toBe('world ');
    // A character cut between two reads (the file grows byte by byte) is read once it is whole.
    const euro = Buffer.from('€');
    appendFileSync(file, euro.subarray(0, 2));
    expect(tail.read()).toBe('');
    appendFileSync(file, euro.subarray(2));
    expect(tail.read()).toBe('€');
    expect(tail.read()).toBe('');
    w.done();
  });

  it('keeps the file a moment after the reply, then removes it and its folder', async () => {
    const h = home();
    const file = streamFile(h, 's/turn-1', 1, 0);
    const w = new StreamWriter(file);
    w.write('all of it');
    w.done();
    expect(new StreamTail(file).read()).toBe('all of it');
    await sleep(STREAM_LINGER_MS + 300);
    expect(existsSync(file)).toBe(false);
    expect(readdirSync(path.join(h, 'streams'))).toEqual([]);
  });

  it('names files by a hash of the turn, never by the turn id itself', () => {
    const file = streamFile('/h', '../../etc/passwd', 1, 0);
    expect(path.dirname(path.dirname(file))).toBe(path.join('/h', 'streams'));
    expect(path.basename(path.dirname(file))).toMatch(/^[0-9a-f]{24}$/);
  });

  it('sweeps files older than the limit and keeps fresh ones', () => {
    const h = home();
    const old = streamFile(h, 'a/turn-1', 1, 0);
    const fresh = streamFile(h, 'b/turn-1', 1, 0);
    for (const f of [old, fresh]) {
      mkdirSync(path.dirname(f), { recursive: true });
      writeFileSync(f, 'x');
    }
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(old, hourAgo, hourAgo);
    expect(sweepStreams(h)).toBe(1);
    expect([existsSync(old), existsSync(path.dirname(old)), existsSync(fresh)]).toEqual([false, false, true]);
    expect(sweepStreams(path.join(h, 'nowhere'))).toBe(0);
  });

  it('a stream that cannot be written is silently dropped', () => {
    const h = home();
    writeFileSync(path.join(h, 'streams'), 'not a folder');
    const w = new StreamWriter(streamFile(h, 's/turn-1', 1, 0));
    expect(() => {
      w.write('lost');
      w.done();
    }).not.toThrow();
  });
});
