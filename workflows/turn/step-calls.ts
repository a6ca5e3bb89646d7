/**
 * Running a step's judged calls (loop.ts): one at a time, or, where the run allows it (the
 * `parallel-tool-calls` patch, patches.ts), consecutive calls that are safe to run together at
 * the same time (deterministic/call-groups.ts). Either way every result is handed on in call
 * order, so the conversation, the call records and the step's tally read the same whatever order
 * the calls finished in.
 *
 * Calls that run together start in call order, each scheduling its activity before the next one
 * starts, within one workflow task: replay meets the same commands in the same order. When the
 * turn is cancelled during such a group, the results of the calls before the first one that
 * failed are handed on; that call and the ones after it stay open, and the loop answers them as
 * cancelled, as it does a call cancelled alone.
 */
import type { ToolOutcome } from '../../deterministic/activity-types';
import { callGroups, runsTogether } from '../../deterministic/call-groups';
import type { ToolResult } from '../../deterministic/types';
import type { JudgedCall } from './judge';

/**
 * Runs the calls not yet answered with `run` and hands each call's result to `take`, in call
 * order. `together`: whether calls may run at the same time (asked only at a group with two or
 * more calls to run, so a run that never has one records no patch marker); absent means never.
 */
export async function runStepCalls(
  judged: readonly JudgedCall[],
  run: (j: JudgedCall) => Promise<ToolOutcome>,
  together: (() => boolean) | undefined,
  take: (j: JudgedCall, result: ToolResult) => void,
): Promise<void> {
  // A call already answered (denied, invalid, a rerun's recorded result) runs nothing: it never splits a group.
  for (const group of callGroups(judged, (j) => j.result !== undefined || runsTogether(j.def))) {
    const toRun = group.filter((j) => !j.result).length;
    if (toRun < 2 || !together?.()) {
      for (const j of group) take(j, j.result ?? (await run(j)));
      continue;
    }
    const settled = await Promise.allSettled(group.map((j) => j.result ?? run(j)));
    for (const [i, s] of settled.entries()) {
      if (s.status === 'rejected') throw s.reason;
      take(group[i]!, s.value);
    }
  }
}
