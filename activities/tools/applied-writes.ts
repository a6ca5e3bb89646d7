/**
 * Exactly-once appends across activity retries. A worker killed after appending but before
 * reporting makes Temporal run the same call again, and appending again would duplicate the
 * text. So before appending, a call records under its call key (`<turnId>/<callId>`) the
 * offset it appends at; a retry that finds the record looks at the bytes there. The records
 * live on the host under `<home>/applied/<sessionId>/`, outside the workspace: the sandbox
 * mounts only the workspace, so it can neither read nor forge them.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { errnoCode } from './workspace';

/** The record of one call: the session's records folder (appliedWritesDir) and the call key. */
export interface AppliedRef {
  dir: string;
  key: string;
}

interface AppendRecord {
  path: string;
  offset: number;
  bytes: number;
  sha256: string;
}

/** The records folder of a session: `<home>/applied/<sessionId>`. */
export function appliedWritesDir(home: string, sessionId: string): string {
  return path.join(home, 'applied', sessionId);
}

/** The record of call `callKey` in the session whose workspace is `workspace`; undefined without a key. */
export function appliedRef(home: string, workspace: string, callKey: string | undefined): AppliedRef | undefined {
  // The workspace folder is named after the session (sessionWorkspace), so is its records folder.
  return callKey ? { dir: appliedWritesDir(home, path.basename(workspace)), key: callKey } : undefined;
}

/**
 * True when an earlier attempt of this call already appended `data` to the file open in
 * `handle` (readable): the record names this path and content and the bytes at its offset are
 * `data`. Otherwise that attempt stopped before appending (the file has its old size, or
 * another writer changed it) and the caller appends.
 */
export async function alreadyAppended(ref: AppliedRef, shown: string, data: Buffer, handle: fs.FileHandle): Promise<boolean> {
  const rec = await readRecord(ref);
  if (!rec || rec.path !== shown || rec.bytes !== data.length || rec.sha256 !== digest(data)) return false;
  const found = Buffer.alloc(data.length);
  let got = 0;
  while (got < found.length) {
    const { bytesRead } = await handle.read(found, got, found.length - got, rec.offset + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return got === data.length && found.equals(data);
}

/** Records, before the append, that this call appends `data` to `shown` at `offset` (all or nothing: written aside, then renamed). */
export async function recordAppend(ref: AppliedRef, shown: string, data: Buffer, offset: number): Promise<void> {
  const rec: AppendRecord = { path: shown, offset, bytes: data.length, sha256: digest(data) };
  await fs.mkdir(ref.dir, { recursive: true, mode: 0o700 });
  const file = recordFile(ref);
  const aside = `${file}.${process.pid}.tmp`;
  await fs.writeFile(aside, JSON.stringify(rec));
  await fs.rename(aside, file);
}

async function readRecord(ref: AppliedRef): Promise<AppendRecord | undefined> {
  try {
    return JSON.parse(await fs.readFile(recordFile(ref), 'utf8')) as AppendRecord;
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return undefined;
    throw err;
  }
}

// Hashed: call keys contain `/` and come from the workflow; a hash is always a safe file name.
function recordFile(ref: AppliedRef): string {
  return path.join(ref.dir, `${digest(Buffer.from(ref.key, 'utf8'))}.json`);
}

function digest(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
