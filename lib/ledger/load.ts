/**
 * The ledger of an id, from Temporal history alone: a turn (every run of it), a session (its
 * runs name its turns, across continue-as-new), or an eval run (its trials, one turn each).
 * A history Temporal no longer holds is a note, not a failure.
 */
import type { Client } from '@temporalio/client';
import type { Pricing } from '../../common/pricing';
import type { ModelSpec } from '../../common/session';
import { UserError } from '../errors';
import { fetchRuns, type Run } from '../trace/runs';
import { readTimeline } from '../trace/timeline';
import { combine, turnLedger } from './compute';
import type { Ledger, TurnLedger } from './types';

/** How to price turns whose session recorded no pricing (sessions from before prices). */
export interface LedgerOptions {
  fallback?: (model: ModelSpec) => Pricing;
}

/** Histories fetched at once for a session's or an eval's turns. */
const PARALLEL = 8;

/** The ledger of one turn from its runs (oldest first). */
export function ledgerOfRuns(turnId: string, runs: readonly Run[], opts: LedgerOptions = {}): TurnLedger {
  return turnLedger(turnId, readTimeline(runs), opts.fallback);
}

/** The ledger of a turn, session or eval id; an id Temporal does not know is a one-line UserError. */
export async function loadLedger(client: Client, id: string, opts: LedgerOptions = {}): Promise<Ledger> {
  const runs = await fetchRuns(client, id);
  if (!runs.length) {
    throw new UserError(`no session, turn or eval ${id} in Temporal`, '`harness sessions` lists sessions; a turn id is <session>/turn-N; Temporal keeps histories for its retention period');
  }
  const type = runs[0]!.workflowType;
  if (type === 'turnWorkflow') return combine('turn', id, [ledgerOfRuns(id, runs, opts)]);
  const children = [...new Set(runs.flatMap((r) => r.events.flatMap((e) => (e.kind === 'childStarted' ? [e.workflowId] : []))))];
  if (type === 'sessionWorkflow') return combine('session', id, ...(await turnsOf(client, children, opts)));
  // An eval's children are its trials; each trial's one turn is `<trial>/turn-1`.
  if (type === 'evalWorkflow') return combine('eval', id, ...(await turnsOf(client, children.map((c) => `${c}/turn-1`), opts)));
  if (type === 'evalCaseWorkflow') return combine('turn', id, ...(await turnsOf(client, children, opts)));
  throw new UserError(`${id} is a ${type || 'unknown'} workflow, not a session, a turn or an eval`, 'give a session id, a turn id (<session>/turn-N) or an eval id');
}

/** The ledgers of these turns (fetched a few at once), with a note for each history gone. */
async function turnsOf(client: Client, turnIds: string[], opts: LedgerOptions): Promise<[TurnLedger[], string[]]> {
  const out: (TurnLedger | undefined)[] = new Array(turnIds.length);
  const notes: string[] = [];
  let next = 0;
  const work = async () => {
    while (next < turnIds.length) {
      const i = next++;
      const runs = await fetchRuns(client, turnIds[i]!);
      if (runs.length) out[i] = ledgerOfRuns(turnIds[i]!, runs, opts);
      else notes.push(`turn ${turnIds[i]}: its history is gone (past Temporal's retention); not counted`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, turnIds.length) }, work));
  return [out.filter((t): t is TurnLedger => t !== undefined), notes];
}
