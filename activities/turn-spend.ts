/**
 * What a turn whose workflow failed (or was cancelled or terminated) had spent, read from its
 * history as `harness cost` reads it: such a turn returns no result, so the session would
 * otherwise count its model calls as nothing (its usage, and the spend its budget goes by).
 */
import { Context } from '@temporalio/activity';
import { addTally, type Tally } from '../deterministic/ledger';
import type { Spend } from '../deterministic/budget';
import type { Usage } from '../deterministic/types';
import { ledgerOfRuns } from '../history/ledger/load';
import { fetchRuns } from '../history/trace/runs';

interface FailedTurnSpend {
  /** The replies' usage, as a finished turn counts it (model calls with their corrections). */
  usage: Usage;
  /** Everything it spent (compressions and failed attempts too), priced as its session prices. */
  spend: Spend;
}

/** The spend of a closed turn that returned no result, from its runs in history. */
export async function failedTurnSpend(input: { turnId: string }): Promise<FailedTurnSpend> {
  const ledger = ledgerOfRuns(input.turnId, await fetchRuns(Context.current().client, input.turnId));
  const replies = addTally(ledger.byKind.model, ledger.byKind.correction);
  return { usage: usageOf(replies), spend: { tokens: ledger.total.total_tokens, ...(ledger.total.nanoUsd !== undefined ? { nanoUsd: ledger.total.nanoUsd } : {}) } };
}

function usageOf(t: Tally): Usage {
  return { prompt_tokens: t.prompt_tokens, completion_tokens: t.completion_tokens, total_tokens: t.total_tokens, ...(t.cached_tokens ? { cached_tokens: t.cached_tokens } : {}) };
}
