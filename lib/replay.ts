/**
 * Replays workflow histories against the current workflow code: the check that a code
 * change is still compatible with every history already stored or running.
 */
import { existsSync } from 'node:fs';
import { Worker } from '@temporalio/worker';
import type { History } from '@temporalio/common/lib/proto-utils';
import { workflowBundlePath } from '../workers/worker';

/** Outcome of replaying one history. */
export type ReplayOutcome = { ok: true } | { ok: false; nondeterministic: boolean; message: string };

/** Replays a history with the bundle written by `npm run build` (or the given one). */
export async function replayHistory(history: History | unknown, workflowId: string, bundlePath = workflowBundlePath()): Promise<ReplayOutcome> {
  const source = existsSync(bundlePath) ? { workflowBundle: { codePath: bundlePath } } : { workflowsPath: require.resolve('../workflows') };
  try {
    await Worker.runReplayHistory({ ...source, replayName: `replay-${workflowId}` }, history, workflowId);
    return { ok: true };
  } catch (err) {
    // Matched by name: the error class lives in the workflow package, which we keep out of Node code.
    const e = err as Error;
    const nondeterministic = e?.name === 'DeterminismViolationError' || /nondetermin/i.test(e?.message ?? '');
    return { ok: false, nondeterministic, message: e?.message ?? String(err) };
  }
}
