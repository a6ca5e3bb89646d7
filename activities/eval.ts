/**
 * The eval trial's activities: its fixtures written into a fresh workspace, the fork of a
 * recorded run a case starts from, and the checks (on the turn's result, every call record, the
 * workspace files they name) with the failure's reason and layer.
 */
import { Context } from '@temporalio/activity';
import type { EvalCase, TrialReport } from '../deterministic/eval';
import { trialCost, trialReport } from '../deterministic/eval-trial-report';
import { ledgerOfRuns } from '../history/ledger/load';
import { recordedLedger } from '../history/ledger/compute';
import type { TurnLedger } from '../history/ledger/types';
import type { TurnResult } from '../deterministic/session';
import type { ForkSpec } from '../deterministic/fork';
import type { ToolCallRecord } from '../deterministic/call-records';
import { planFork } from '../history/fork';
import { fetchRuns, type Run } from '../history/trace/runs';
import { readTimeline } from '../history/trace/timeline';
import type { Conversations } from './store/conversations';
import { withStore } from './store/errors';
import { readFile, writeFile } from './tools/files';
import { ensureWorkspace } from './tools/workspace';

interface EvalDeps {
  home: string;
  conversations: Conversations;
  workspaceMaxBytes?: number;
}

export interface CheckEvalTrialInput {
  sessionId: string;
  turnId: string;
  case: EvalCase;
  trial: number;
  result: TurnResult;
  /** When the trial started (ms since the epoch). */
  startedAtMs: number;
}

export function createEvalActivities(deps: EvalDeps) {
  return {
    /**
     * Writes the case's fixtures into the trial's workspace (confined like the model's own writes)
     * and says when the trial started: the eval times its trials by it (its code reads no clock).
     */
    async prepareEvalCase(input: { sessionId: string; fixtures: Record<string, string> }): Promise<{ files: number; startedAtMs: number }> {
      const startedAtMs = Date.now();
      const entries = Object.entries(input.fixtures);
      // No fixtures, no workspace yet: the turn makes one if it writes.
      const ws = entries.length ? await ensureWorkspace(deps.home, input.sessionId) : '';
      for (const [path, content] of entries) {
        const r = await writeFile(ws, { path, content }, deps.workspaceMaxBytes ? { maxBytes: deps.workspaceMaxBytes } : {});
        if (!r.ok) throw new Error(`fixture ${path}: ${r.message ?? r.error_type}`);
      }
      return { files: entries.length, startedAtMs };
    },

    /** The fork a case starting from a recorded run begins with (read from that run's history). */
    async planEvalFork(input: { turnId: string; step: number }): Promise<ForkSpec> {
      // A trial's workspace is the case's fixtures (written first) plus the turn's writes before
      // the step; the recorded turn's starting snapshot would overwrite fixtures, so it is not used.
      const { seed: _seed, ...spec } = (await planFork(Context.current().client, input.turnId, input.step)).spec;
      return spec;
    },

    /** Runs the case's checks on the trial and says why it failed. */
    async checkEvalTrial(input: CheckEvalTrialInput): Promise<TrialReport> {
      const r = input.result;
      const chunks = await Promise.all(
        (r.storedToolCalls ?? []).map(async (hash) => JSON.parse(await withStore(() => deps.conversations.getText(input.sessionId, hash))) as ToolCallRecord[]),
      );
      const calls = [...chunks.flat(), ...r.toolCalls];
      const files: Record<string, string | undefined> = {};
      // The workspace is made (if the trial never wrote one) only for checks that read a file.
      let ws: string | undefined;
      for (const c of input.case.checks) {
        if (c.type !== 'file_exists' && c.type !== 'file_contains') continue;
        ws ??= await ensureWorkspace(deps.home, input.sessionId);
        const read = await readFile(ws, { path: c.path, max_bytes: 1024 * 1024 });
        files[c.path] = read.ok ? String((read.result as { content: string }).content) : undefined;
      }
      const { ledger, runs } = await trialLedger(input.turnId, r, () => fetchRuns(Context.current().client, input.turnId));
      const trial = { case: input.case, trial: input.trial, sessionId: input.sessionId, turnId: input.turnId };
      return trialReport(trial, { result: r, calls, files }, {
        ...(ledger ? { cost: trialCost(ledger) } : {}),
        rateLimited: r.retriedAttempts ? rateLimited(runs) : 0,
        elapsedMs: Date.now() - input.startedAtMs,
      });
    },
  };
}

/**
 * A trial's ledger as `harness cost` counts it, and its turn's runs when they had to be read. A
 * turn that closed with an exact tally in its result (counted by the same code) needs no history;
 * the history is read (a list, a describe and every event: most of what a check cost the server)
 * only when that tally is not exact, or when attempts were retried (rate limits are in history).
 */
export async function trialLedger(turnId: string, r: TurnResult, readRuns: () => Promise<Run[]>): Promise<{ ledger?: TurnLedger; runs: Run[] }> {
  const recorded = recordedLedger(turnId, r, r.ledger?.pricing);
  const runs = recorded && !r.retriedAttempts ? [] : await readRuns();
  const ledger = recorded ?? (runs.length ? ledgerOfRuns(turnId, runs) : undefined);
  return { ...(ledger ? { ledger } : {}), runs };
}

/**
 * Model call attempts of the turn that failed with a rate limit (429), from its history: the
 * attempts before the one that closed each call whose last failure was one (a local first
 * attempt counts, as the timeline reads it).
 */
function rateLimited(runs: readonly Run[]): number {
  let n = 0;
  for (const a of readTimeline(runs).activities) if (a.type === 'callModel' && a.lastFailure && /\b429\b|rate limit/i.test(a.lastFailure)) n += (a.attempt ?? 1) - 1;
  return n;
}
