/**
 * The turns of an eval's trials, read from its stored histories: an eval from before it ran its
 * trials itself (trial workflows, each the parent of `<trial>/turn-1`) and one from after (the
 * turns are its children). `harness cost <eval-id>` prices these turns.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { describe, expect, it } from 'vitest';
import { childrenOf, trialTurns } from '../../history/ledger/scan';

const stored = (label: string) => [{ runId: 'r', history: historyFromJSON(JSON.parse(readFileSync(path.join(__dirname, '..', 'histories', label, `history-${label}.json`), 'utf8'))) }];
const turns = (label: string) => ['write', 'ask', 'shell'].map((c) => `history-${label}-${c}-t1/turn-1`).sort();

describe("an eval's trial turns", () => {
  it('are the children of trial workflows in an eval that ran each trial as a workflow of its own', () => {
    const runs = stored('eval-v1');
    expect(childrenOf(runs).sort()).toEqual(['write', 'ask', 'shell'].map((c) => `history-eval-v1-${c}-t1`).sort());
    expect(trialTurns(runs).sort()).toEqual(turns('eval-v1'));
  });

  it("are the eval's own children once the eval runs its trials itself", () => {
    const runs = stored('eval-v2');
    expect(childrenOf(runs).sort()).toEqual(turns('eval-v2'));
    expect(trialTurns(runs).sort()).toEqual(turns('eval-v2'));
  });
});
