/**
 * Claims on one worker's disk, for a store that keeps none (store/call-claims.ts keeps them in
 * the database, where every worker of a queue sees them: the workers' default), and for the tool
 * executors built without a store (tests, benchmarks). They hold only while every worker of a
 * queue shares this disk.
 *
 * Claims are files under `<home>/applied/<sessionId>/claims/` (on the host, outside the
 * workspace, next to write_file's append records: removed with them when the session ends or is
 * purged). Creating a claim and publishing a result are both exclusive (`wx`, `link`), so of two
 * attempts running at once (a worker thought lost that was only slow) one runs and one result wins.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs/promises';
import path from 'node:path';
import type { ToolResult } from '../../deterministic/types';
import type { CallClaims, Claim } from '../store/call-claims';
import { appliedWritesDir } from '../tools/applied-writes';

/** The files of one call's claim. */
function files(home: string, sessionId: string, key: string): { dir: string; claim: string; result: string } {
  const dir = path.join(appliedWritesDir(home, sessionId), 'claims');
  const name = createHash('sha256').update(key).digest('hex').slice(0, 32);
  return { dir, claim: path.join(dir, `${name}.claim`), result: path.join(dir, `${name}.result`) };
}

/** The claims of the sessions of the worker whose HARNESS_HOME is `home`. */
export class FileCallClaims implements CallClaims {
  constructor(private readonly home: string) {}

  async claim(sessionId: string, key: string, by: string): Promise<Claim> {
    const f = files(this.home, sessionId, key);
    await fs.mkdir(f.dir, { recursive: true, mode: 0o700 });
    try {
      await fs.writeFile(f.claim, JSON.stringify({ key, by, at: new Date().toISOString() }), { flag: 'wx', mode: 0o600 });
      return { kind: 'run' };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const done = await readResult(f.result);
    if (done) return { kind: 'done', result: done };
    const claim = await fs.readFile(f.claim, 'utf8').then((t) => JSON.parse(t) as { by?: string }, () => ({ by: undefined }));
    return { kind: 'unfinished', by: claim.by ?? 'an earlier attempt' };
  }

  async settle(sessionId: string, key: string, result: ToolResult): Promise<ToolResult> {
    const f = files(this.home, sessionId, key);
    const tmp = `${f.result}.${process.pid}.${Date.now()}.tmp`;
    await fs.writeFile(tmp, JSON.stringify({ key, result }), { mode: 0o600 });
    try {
      await fs.link(tmp, f.result);
      return result;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      return (await readResult(f.result)) ?? result;
    } finally {
      await fs.rm(tmp, { force: true });
    }
  }

  /** The folder goes with the session's append records (closeSession, purge). */
  async purge(): Promise<number> {
    return 0;
  }
}

async function readResult(file: string): Promise<ToolResult | undefined> {
  try {
    return (JSON.parse(await fs.readFile(file, 'utf8')) as { result: ToolResult }).result;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
