/**
 * A reader (trace --full, the console, the OTLP export) opening the message store while a worker
 * holds the embedded database: it reads through the server the worker runs, beside the worker's
 * own statements on the one PGlite backend, and leaves none of its own behind.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { Database } from '../../activities/memory/database';
import { Conversations } from '../../activities/store/conversations';
import { openMessageStore } from '../../client/store-reader';

const home = mkdtempSync(path.join(os.tmpdir(), 'store-reader-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

it("reads a conversation while the worker holds the database and has prepared the same statements; it leaves the worker's backend as it found it", async () => {
  const worker = new Database({ home });
  try {
    // The worker writes a conversation and reads it back cold: its store prepares its writes and reads.
    const written = await new Conversations(() => worker.messages()).append('s1', null, [], [
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'hi there' },
    ]);
    const messages = await worker.messages();
    expect((await messages.readChain('s1', written.head!)).length).toBe(2);
    const pool = (worker as unknown as { pool: { query(text: string): Promise<{ rows: { n: string }[] }> } }).pool;
    const prepared = async () => Number((await pool.query('SELECT count(*) AS n FROM pg_prepared_statements')).rows[0]!.n);
    const before = await prepared();

    const opened = await openMessageStore(home, {});
    if ('problem' in opened) throw new Error(opened.problem);
    try {
      const read = await new Conversations(() => Promise.resolve(opened.store)).load('s1', written.head);
      expect(read.map((m) => m.content)).toEqual(['hello', 'hi there']);
    } finally {
      await opened.close();
    }
    expect(await prepared()).toBe(before);
    // The worker's own statements still work after the reader left.
    expect((await messages.readChain('s1', written.head!)).length).toBe(2);
  } finally {
    await worker.close();
  }
});
