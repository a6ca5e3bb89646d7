/**
 * At most once for calls that are not idempotent: custom tools, http_request's POST, PUT, PATCH
 * and DELETE (tools/at-most-once.ts runs them). Temporal runs an activity again when its worker
 * is lost, and the harness cannot know how far the lost attempt got. So a call claims its key
 * (`<turnId>/<callId>`) before it runs, and writes its result beside the claim once it has one:
 * a later attempt that finds the result returns it; one that finds only the claim does not run
 * the call again and says it may or may not have taken effect.
 *
 * Claims are files under `<home>/applied/<sessionId>/claims/` (on the host, outside the
 * workspace, next to write_file's append records: removed with them when the session ends or is
 * purged). Creating a claim and publishing a result are both exclusive (`wx`, `link`), so of two
 * attempts running at once (a worker thought lost that was only slow) one runs and one result wins.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ToolResult } from '../../deterministic/types';
import { appliedWritesDir } from '../tools/applied-writes';

/** What a claim found: this attempt may run the code, or an earlier one finished, or started and never finished. */
type Claim = { kind: 'run' } | { kind: 'done'; result: ToolResult } | { kind: 'unfinished'; by: string };

/** The files of one call's claim. */
function files(home: string, sessionId: string, key: string): { dir: string; claim: string; result: string } {
  const dir = path.join(appliedWritesDir(home, sessionId), 'claims');
  const name = createHash('sha256').update(key).digest('hex').slice(0, 32);
  return { dir, claim: path.join(dir, `${name}.claim`), result: path.join(dir, `${name}.result`) };
}

/** Claims call `key` of the session before its code runs (see the module comment). */
export async function claimCall(home: string, sessionId: string, key: string): Promise<Claim> {
  const f = files(home, sessionId, key);
  await fs.mkdir(f.dir, { recursive: true, mode: 0o700 });
  const by = `${os.hostname()} pid ${process.pid}`;
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

/** Publishes the call's result once; the first result published wins, and is returned. */
export async function settleCall(home: string, sessionId: string, key: string, result: ToolResult): Promise<ToolResult> {
  const f = files(home, sessionId, key);
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

async function readResult(file: string): Promise<ToolResult | undefined> {
  try {
    return (JSON.parse(await fs.readFile(file, 'utf8')) as { result: ToolResult }).result;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
