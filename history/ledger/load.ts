/**
 * The ledger of an id, from Temporal history alone: a turn (every run of it), a session (its
 * runs name its turns, across continue-as-new), or an eval run (its trials, one turn each).
 * A history Temporal no longer holds is a note, not a failure.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Pricing } from '../../deterministic/pricing';
import type { TurnResult } from '../../deterministic/session';
import type { ModelSpec } from '../../deterministic/session-config';
import { decodePayload } from '../trace/events';
import { UserError } from '../../machine/errors';
import { noAgentTurn } from '../unknown-turn';
import { isAgentTurnId, sessionOfTurnId } from '../../deterministic/turn-id';
import type { Run } from '../trace/runs';
import { readTimeline } from '../trace/timeline';
import { combine, recordedLedger, turnLedger } from './compute';
import { fetchRawRuns, type RawRun } from './fetch';
import { HistoryBatchTooLarge, readHistory } from '../read-history';
import { childrenOf, scanTurn, trialTurns, withoutResetBases, workflowTypeOf } from './scan';
import type { Ledger, TurnLedger } from './types';

/** How to price turns whose session recorded no pricing (sessions from before prices); `calls`: read every call from the turns' events. */
interface LedgerOptions {
  fallback?: (model: ModelSpec) => Pricing;
  calls?: boolean;
}

/** Histories fetched at once for a session's or an eval's turns. */
const PARALLEL = 8;

/** The ledger of one turn from its runs (oldest first). */
export function ledgerOfRuns(turnId: string, runs: readonly Run[], opts: LedgerOptions = {}): TurnLedger {
  return turnLedger(turnId, readTimeline(runs), opts.fallback);
}

/** The ledger of a turn, session or eval id; an id Temporal does not know is a one-line UserError. */
export async function loadLedger(client: Client, id: string, opts: LedgerOptions = {}): Promise<Ledger> {
  const runs = withoutResetBases(await fetchRawRuns(client, id));
  if (!runs.length) {
    throw noAgentTurn(id) ?? new UserError(`no session, turn or eval ${id} in Temporal`, '`harness sessions` lists sessions; a turn id is <session>/turn-N; Temporal keeps histories for its retention period');
  }
  const type = workflowTypeOf(runs[0]!);
  if (type === 'turnWorkflow') return combine('turn', id, [(!opts.calls && recordedOf(id, runs)) || turnLedger(id, scanTurn(runs), opts.fallback)]);
  const children = childrenOf(runs);
  // A session's background sub-agents are counted beside its turns (their parent turns' results do not hold them).
  if (type === 'sessionWorkflow') return combine('session', id, ...(await turnsOf(client, [...children, ...backgroundChildrenOf(id, runs)], opts)));
  if (type === 'evalWorkflow') return combine('eval', id, ...(await turnsOf(client, trialTurns(runs), opts)));
  if (type === 'evalCaseWorkflow') return combine('turn', id, ...(await turnsOf(client, children, opts)));
  throw new UserError(`${id} is a ${type || 'unknown'} workflow, not a session, a turn or an eval`, 'give a session id, a turn id (<session>/turn-N) or an eval id');
}

/**
 * The background sub-agents that reported to a session (deterministic/background.ts), from its
 * runs' signals. A signal can come from anyone who reaches Temporal: only ids of this session's
 * sub-agents' turns are taken, so a forged one cannot bring another session's turn into its cost.
 */
function backgroundChildrenOf(sessionId: string, runs: RawRun[]): string[] {
  const ids = runs.flatMap((r) =>
    (r.history.events ?? []).flatMap((e) => {
      const signal = e.workflowExecutionSignaledEventAttributes;
      if (signal?.signalName !== 'backgroundStatus' && signal?.signalName !== 'backgroundResult') return [];
      const turnId = (decodePayload(signal.input?.payloads?.[0]) as { turnId?: unknown } | undefined)?.turnId;
      return typeof turnId === 'string' && isAgentTurnId(turnId) && sessionOfTurnId(turnId) === sessionId ? [turnId] : [];
    }),
  );
  return [...new Set(ids)];
}

/** The ledgers of these turns (fetched a few at once), with a note for each history gone. */
async function turnsOf(client: Client, turnIds: string[], opts: LedgerOptions): Promise<[TurnLedger[], string[]]> {
  const out: (TurnLedger | undefined)[] = new Array(turnIds.length);
  const notes: string[] = [];
  let next = 0;
  const work = async () => {
    while (next < turnIds.length) {
      const i = next++;
      const id = turnIds[i]!;
      try {
        out[i] = await oneTurn(client, id, opts);
      } catch (err) {
        // One turn the client cannot read whole is a note; the others are counted.
        if (!(err instanceof HistoryBatchTooLarge)) throw err;
        notes.push(`${err.message}; not counted`);
        continue;
      }
      if (!out[i]) notes.push(`turn ${id}: its history is gone (past Temporal's retention); not counted`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, turnIds.length) }, work));
  return [out.filter((t): t is TurnLedger => t !== undefined), notes];
}

/** The ledger of one turn of a session or eval; undefined when its history is gone. */
async function oneTurn(client: Client, id: string, opts: LedgerOptions): Promise<TurnLedger | undefined> {
  // A closed turn recorded its tally in its result: one event instead of every one.
  const recorded = opts.calls ? undefined : await closedTurnLedger(client, id);
  if (recorded) return recorded;
  const runs = withoutResetBases(await fetchRawRuns(client, id));
  return runs.length ? turnLedger(id, scanTurn(runs), opts.fallback) : undefined;
}

/** The ledger a closed turn recorded in its result (its latest run's close event), if it holds an exact one. */
async function closedTurnLedger(client: Client, turnId: string): Promise<TurnLedger | undefined> {
  let runId: string;
  try {
    const d = await client.workflow.getHandle(turnId).describe();
    if (d.status.name !== 'COMPLETED') return undefined;
    runId = d.runId;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
  const closed = await readHistory(client, turnId, runId, { closeEvent: true, pageSize: 1 });
  const result = decodePayload(closed.events?.at(-1)?.workflowExecutionCompletedEventAttributes?.result?.payloads?.[0]) as TurnResult | undefined;
  return result ? recordedLedger(turnId, result, result.ledger?.pricing) : undefined;
}

/** The recorded ledger of a turn whose runs were fetched already (its last run completed). */
function recordedOf(turnId: string, runs: RawRun[]): TurnLedger | undefined {
  const last = runs[runs.length - 1]!.history.events?.at(-1)?.workflowExecutionCompletedEventAttributes;
  const result = last ? (decodePayload(last.result?.payloads?.[0]) as TurnResult | undefined) : undefined;
  return result ? recordedLedger(turnId, result, result.ledger?.pricing) : undefined;
}
