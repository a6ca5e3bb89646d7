/**
 * Claims of calls that must not run twice, wherever they are kept (the database of real Postgres
 * and of the embedded PGlite, memory, one worker's disk): one attempt runs, a later one finds the
 * claim or the result, the first result wins, and a session's purge forgets its claims only.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileCallClaims } from '../../../activities/custom-tools/claims';
import { migrate } from '../../../activities/memory/migrate';
import { InMemoryCallClaims, type CallClaims } from '../../../activities/store/call-claims';
import { PgMessageStore } from '../../../activities/store/pg-message-store';
import { toolError, toolOk } from '../../../deterministic/errors';
import { embeddedPostgres, realPostgres, type Backend } from '../memory/backends';

const backends: Backend[] = [];
afterAll(async () => {
  for (const b of backends) await b.teardown();
});

async function inDatabase(open: () => Promise<Backend>): Promise<CallClaims> {
  const b = await open();
  backends.push(b);
  const pool = b.pool();
  await migrate(pool);
  return new PgMessageStore(pool).callClaims();
}

const shared: [string, () => Promise<CallClaims>][] = [
  ['real Postgres', () => inDatabase(realPostgres)],
  ['embedded PGlite', () => inDatabase(embeddedPostgres)],
  ['memory', async () => new InMemoryCallClaims()],
];

describe.each([...shared, ['one worker\'s disk', async () => new FileCallClaims(mkdtempSync(path.join(os.tmpdir(), 'harness-claims-')))] as const])('claims in %s', (_name, open) => {
  it('let the first attempt run, tell a later one it did not finish, then return the first result recorded', async () => {
    const claims = await open();
    const key = 's-1/turn-1/t1-s1-c0';
    expect(await claims.claim('s-1', key, 'host-a pid 1')).toEqual({ kind: 'run' });
    expect(await claims.claim('s-1', key, 'host-b pid 2')).toEqual({ kind: 'unfinished', by: 'host-a pid 1' });
    // Two attempts settle (one slow, one that found the claim): the first result stands for both.
    expect(await claims.settle('s-1', key, toolOk({ charged: true }))).toEqual(toolOk({ charged: true }));
    expect(await claims.settle('s-1', key, toolError('EXECUTION_ERROR', 'unsure'))).toEqual(toolOk({ charged: true }));
    expect(await claims.claim('s-1', key, 'host-c pid 3')).toEqual({ kind: 'done', result: toolOk({ charged: true }) });
    // Another call, another session: claims of their own.
    expect(await claims.claim('s-1', 's-1/turn-1/t1-s1-c1', 'host-a pid 1')).toEqual({ kind: 'run' });
    expect(await claims.claim('s-2', key, 'host-a pid 1')).toEqual({ kind: 'run' });
  });
});

// The disk's claims are removed with the session's folder, not by purge.
describe.each(shared)('claims in %s', (_name, open) => {
  it('of many attempts claiming one call at once, exactly one runs; a purge forgets only its session', async () => {
    const claims = await open();
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => claims.claim('race', 'race/turn-1/t1-s1-c0', `host-${i} pid ${i}`)));
    expect(outcomes.filter((o) => o.kind === 'run')).toHaveLength(1);
    expect(outcomes.filter((o) => o.kind === 'unfinished')).toHaveLength(19);
    // A result with the NUL character is kept as it is.
    expect(await claims.settle('race', 'race/turn-1/t1-s1-c0', toolOk({ text: 'a\u0000b' }))).toEqual(toolOk({ text: 'a\u0000b' }));
    await claims.claim('other', 'other/turn-1/t1-s1-c0', 'host-a pid 1');
    expect(await claims.purge('race')).toBe(1);
    expect(await claims.claim('race', 'race/turn-1/t1-s1-c0', 'host-a pid 1')).toEqual({ kind: 'run' });
    expect(await claims.claim('other', 'other/turn-1/t1-s1-c0', 'host-b pid 2')).toEqual({ kind: 'unfinished', by: 'host-a pid 1' });
  });
});
