/**
 * A trial's cost comes from the tally its turn recorded in its result; the turn's history is read
 * only when that tally is not exact, or when attempts were retried (rate limits are in history).
 */
import { describe, expect, it } from 'vitest';
import { trialLedger } from '../../activities/eval';
import { emptyLedgerTally } from '../../deterministic/ledger';
import type { TurnResult } from '../../deterministic/session';
import type { Run } from '../../history/trace/runs';

const tally = () => {
  const t = emptyLedgerTally();
  t.byKind.model = { calls: 2, prompt_tokens: 300, completion_tokens: 20, cached_tokens: 0, total_tokens: 320, nanoUsd: 1_500 };
  return t;
};

function result(extra: Partial<TurnResult>): TurnResult {
  return { turnId: 's/turn-1', turn: 1, answer: 'ok', terminated_by: 'final_answer', steps: 2, usage: { prompt_tokens: 300, completion_tokens: 20, total_tokens: 320 }, toolCalls: [], ...extra } as TurnResult;
}

/** A reader of the turn's runs that counts its reads. */
function reader(runs: Run[] = []) {
  const read = { count: 0, runs: async () => (read.count++, runs) };
  return read;
}

describe('trialLedger', () => {
  it('takes an exact recorded tally without reading history', async () => {
    const read = reader();
    const { ledger, runs } = await trialLedger('s/turn-1', result({ ledger: { ...tally(), exact: true } }), read.runs);
    expect(read.count).toBe(0);
    expect(runs).toEqual([]);
    expect(ledger?.total).toMatchObject({ calls: 2, total_tokens: 320, nanoUsd: 1_500 });
  });

  it('reads history when attempts were retried (their rate limits are there), keeping the recorded tally', async () => {
    const read = reader();
    const { ledger } = await trialLedger('s/turn-1', result({ ledger: { ...tally(), exact: true }, retriedAttempts: 1 }), read.runs);
    expect(read.count).toBe(1);
    expect(ledger?.total.total_tokens).toBe(320);
  });

  it('reads history when the tally is not exact or missing (a turn recorded before tallies)', async () => {
    for (const r of [result({ ledger: { ...tally(), exact: false } }), result({})]) {
      const read = reader();
      const { ledger } = await trialLedger('s/turn-1', r, read.runs);
      expect(read.count).toBe(1);
      expect(ledger).toBeUndefined(); // no runs to count from
    }
  });
});
