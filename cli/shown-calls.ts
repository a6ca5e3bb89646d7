/**
 * The pending calls this CLI has shown its user, per session, under HARNESS_HOME: each call's id
 * with the digest of its tool and arguments, written by every view that shows a pending call
 * (`status`, the prompt and the waiting lines of `run` and `chat`, `show`, what `approve` and
 * `deny` print when the turn asks again). `approve` and `deny` without call ids decide a call
 * only when this user was shown it as it is now, so another person's decision in between (a
 * denial, after which the model asks for something else) cannot turn this user's command into
 * an approval of a call nobody here saw.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** A call as shown: its id and the digest of its tool and arguments. */
interface ShownCall {
  callId: string;
  digest?: string;
}

/** How many calls are remembered per session (the newest). */
const KEEP = 200;

function fileOf(home: string, sessionId: string): string {
  return path.join(home, 'shown-calls', `${encodeURIComponent(sessionId)}.json`);
}

/** The digests shown for the session's calls, by call id (empty when none was shown or the record cannot be read). */
export function shownDigests(home: string, sessionId: string): Map<string, string> {
  try {
    const data = JSON.parse(readFileSync(fileOf(home, sessionId), 'utf8')) as { calls?: { call_id?: unknown; digest?: unknown }[] };
    return new Map((data.calls ?? []).filter((c) => typeof c.call_id === 'string').map((c) => [String(c.call_id), typeof c.digest === 'string' ? c.digest : '']));
  } catch {
    return new Map();
  }
}

/** Whether this user was shown the call as it is now: same id, same digest. */
export function wasShown(shown: Map<string, string>, c: ShownCall): boolean {
  return shown.get(c.callId) === (c.digest ?? '');
}

/**
 * Notes that these calls were shown to the user. Best effort: a home that cannot be written only
 * means `approve` without ids asks (or wants the ids), the safe side.
 */
export function recordShown(home: string, sessionId: string, calls: readonly ShownCall[]): void {
  if (!calls.length) return;
  try {
    const shown = shownDigests(home, sessionId);
    for (const c of calls) {
      // Re-inserted at the end: the newest are kept.
      shown.delete(c.callId);
      shown.set(c.callId, c.digest ?? '');
    }
    const kept = [...shown].slice(-KEEP).map(([call_id, digest]) => ({ call_id, digest }));
    const file = fileOf(home, sessionId);
    mkdirSync(path.dirname(file), { recursive: true });
    // Written whole and renamed: a reader never sees half a file.
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ session_id: sessionId, calls: kept }));
    renameSync(tmp, file);
  } catch {
    // See above: nothing is decided on the strength of a record that was not written.
  }
}
