/**
 * The turns of an eval's trials, read from its histories: an eval from before `eval-trials-inline`
 * ran each trial as a workflow of its own (each the parent of `<trial>/turn-1`), one from after
 * has the turns as its children. `harness cost <eval-id>` prices these turns. The first kind is
 * outside the replay support window (docs/durability.md), but such evals stay readable while
 * Temporal keeps them: its history is kept here as a fixture (fixtures/), not among the histories
 * that must replay.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { describe, expect, it } from 'vitest';
import { childrenOf, trialTurns } from '../../history/ledger/scan';

const read = (file: string) => [{ runId: 'r', history: historyFromJSON(JSON.parse(readFileSync(file, 'utf8'))) }];
const turns = (label: string) => ['write', 'ask', 'shell'].map((c) => `history-${label}-${c}-t1/turn-1`).sort();

describe("an eval's trial turns", () => {
  it('are the children of trial workflows in an eval that ran each trial as a workflow of its own', () => {
    const runs = read(path.join(__dirname, 'fixtures', 'eval-v1-trial-workflows.json'));
    expect(childrenOf(runs).sort()).toEqual(['write', 'ask', 'shell'].map((c) => `history-eval-v1-${c}-t1`).sort());
    expect(trialTurns(runs).sort()).toEqual(turns('eval-v1'));
  });

  it("are the eval's own children once the eval runs its trials itself", () => {
    const runs = read(path.join(__dirname, '..', 'histories', 'eval-v5', 'history-eval-v5.json'));
    expect(childrenOf(runs).sort()).toEqual(turns('eval-v5'));
    expect(trialTurns(runs).sort()).toEqual(turns('eval-v5'));
  });
});
