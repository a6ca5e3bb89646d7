/**
 * `harness replay`: every run of a session's workflow and of each turn it started (all
 * continue-as-new runs; a running one with its history so far) replayed against the workflow
 * code, each run OK or its first divergence in words.
 */
import type { Client } from '@temporalio/client';
import type { History } from '@temporalio/common/lib/proto-utils';
import { UserError } from '../../machine/errors';
import { isAnyTurnId } from '../../deterministic/turn-id';
import { noAgentTurn } from '../unknown-turn';
import { firstDivergentEvent, replayHistory } from './replay';
import { codeWords, describeEvent, sdkDetail, turnWords } from './words';
import { workflowBundlePath } from '../../machine/paths';
import { workflowRuns } from '../workflow-runs';

/** Where and how a run's history and the code part ways. */
interface Divergence {
  /** The event of the run's history where the code went another way (null: not found). */
  event_id: number | null;
  event_type: string;
  /** What the history holds there, e.g. `the model call of step 2`. */
  history: string;
  /** What the code did instead, e.g. `scheduled a tool call there`. */
  code: string;
  /** The SDK's own message. */
  detail: string;
}

/** One replayed run. `error`: the replay failed for another reason than nondeterminism. */
export interface RunReport {
  workflow_id: string;
  run_id: string;
  ok: boolean;
  divergence?: Divergence;
  error?: string;
}

export interface ReplayReport {
  ok: boolean;
  runs: RunReport[];
}

/** What to do about a divergence. */
export const REPLAY_HINT = 'a workflow change needs patched(); see docs/durability.md';

/** Replays every run of `id` (a session or a turn) and of the turns a session started, oldest first. */
export async function replayWorkflows(client: Client, id: string, bundlePath = workflowBundlePath()): Promise<ReplayReport> {
  const own = await workflowRuns(client, id);
  if (!own.length) {
    const unknownAgent = noAgentTurn(id);
    if (unknownAgent) throw unknownAgent;
    throw new UserError(`no session or turn named ${id}`, 'list sessions with `harness sessions`; a turn id looks like <session>/turn-1');
  }
  // The session's turns, and the sub-agents' turns those started, as deep as they nest.
  const all = [{ id, runs: own }];
  const seen = new Set([id]);
  for (let i = 0; i < all.length; i++) {
    for (const child of all[i]!.runs.flatMap((r) => childIds(r.history))) {
      if (seen.has(child)) continue;
      seen.add(child);
      all.push({ id: child, runs: await workflowRuns(client, child) });
    }
  }
  const runs: RunReport[] = [];
  for (const w of all) {
    for (const r of w.runs) runs.push(await replayRun(w.id, r.runId, r.history, bundlePath));
  }
  return { ok: runs.every((r) => r.ok), runs };
}

/** Replays one run's history; a divergence is located (event) and told in words. */
async function replayRun(workflowId: string, runId: string, history: History, bundlePath = workflowBundlePath()): Promise<RunReport> {
  const base = { workflow_id: workflowId, run_id: runId };
  const out = await replayHistory(history, workflowId, bundlePath);
  if (out.ok) return { ...base, ok: true };
  if (!out.nondeterministic) return { ...base, ok: false, error: out.message.split('\n')[0]! };
  const eventId = await firstDivergentEvent(history, workflowId, out.message, bundlePath);
  const at = eventId === undefined ? { type: 'unknown', words: 'an event the replay did not locate' } : describeEvent(history.events ?? [], eventId);
  return {
    ...base,
    ok: false,
    divergence: { event_id: eventId ?? null, event_type: at.type, history: at.words, code: codeWords(out.message), detail: sdkDetail(out.message) },
  };
}

/** One line per run for a person: `turn 2 (s/turn-2), run 1 of 2: OK` or where and how it diverges. */
export function reportLines(report: ReplayReport): string[] {
  const count = new Map<string, number>();
  for (const r of report.runs) count.set(r.workflow_id, (count.get(r.workflow_id) ?? 0) + 1);
  const seen = new Map<string, number>();
  return report.runs.map((r) => {
    const k = (seen.get(r.workflow_id) ?? 0) + 1;
    seen.set(r.workflow_id, k);
    const name = isAnyTurnId(r.workflow_id) ? turnWords(r.workflow_id) : `session ${r.workflow_id}`;
    const head = `${name}, run ${k} of ${count.get(r.workflow_id)}`;
    if (r.ok) return `${head}: OK`;
    if (r.error) return `${head}: replay failed: ${r.error}`;
    const d = r.divergence!;
    const where = d.event_id === null ? 'diverges' : `diverges at event ${d.event_id} (${d.event_type})`;
    return `${head}: ${where}: the history holds ${d.history}; the code ${d.code}\n  SDK: ${d.detail}`;
  });
}

/** The workflows (turns) a run started. */
function childIds(history: History): string[] {
  return (history.events ?? []).flatMap((e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId ?? []);
}
