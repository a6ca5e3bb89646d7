/**
 * The turn's version decisions: which behaviours of turns recorded before a change a run keeps.
 *
 * A run started by the current code takes one marker, `turn-patches-4`, and with it every patch
 * a turn reads through `since` (`model-handoff-queue`, whose own marker would otherwise come
 * after a local activity's, and `shell-cancel-waits`). Each `patched()` call costs a marker and a
 * search-attribute update (Core upserts TemporalChangeVersion for each, a visibility write on the
 * server), so a run of the current code takes that one only; but for the patches newer than the
 * set, each taken only by a turn that reaches its code: `finish-output-schema` (a session with
 * structured output) and `parallel-tool-calls` (a step with two calls that run together). They
 * are taken directly, never through `since`, which would give their code to the runs the set
 * recorded before them.
 *
 * A turn whose starter runs the same code can be told the set in its input (`patchSet`: an
 * eval's trials, patch `eval-turn-patch-set`): it takes the set from there and records no marker,
 * so a trial's turn costs the server no marker and no visibility write. Its history holds the
 * input, so replay decides the same; a later set must therefore keep reading an input that names
 * this one as a run of this set, since such runs hold no marker to say so.
 *
 * Only turns of the support window replay (docs/durability.md, "Support window"): those recorded
 * with `turn-patches-4` or `turn-patches-3`. A `turn-patches-3` run took every patch from before
 * the sets (the permission policy and its exact analysis, local tools, compression, the
 * harness's call ids, per-tool timeouts, tool failures as results, script-aware estimates, the
 * message store, the turn's own event count, bounded model input, partial approval notices, the
 * local prepareTurn and the local model call), as every run since does: that code runs
 * unconditionally, and its marker is consumed by `deprecatePatch`. The patches that came after it
 * are each its own `patched()` call in such a run, taken where it is read.
 */
import { deprecatePatch, patched, workflowInfo } from '@temporalio/workflow';
import { exactPolicy } from '../../deterministic/policy/decide';
import { parsePolicy, type Policy } from '../../deterministic/policy/schema';
import type { TurnInput } from '../../deterministic/session';

/** What the turn's patches decided. */
export interface TurnPatches {
  /** The policy the turn judges with: the session's, under the exact analysis (version 3). */
  policy: Policy;
  /** The conversation is held by reference to the message store (inline only for the history benchmark's baseline, `inlineHistory`). */
  messageStore: boolean;
  /**
   * Structured output through finish (`finish-output-schema`): finish is offered with the output's
   * JSON schema as its parameters and takes the answer object (deterministic/finish-output.ts).
   * Only a session with an output schema asks, so other turns take no marker of it.
   */
  outputFinish: boolean;
  /**
   * Whether the run takes the code of a later patch (`model-handoff-queue`,
   * `shell-cancel-waits`): always in a run of the current code; in an older one, as its marker says.
   */
  since(patchId: string): boolean;
}

/** The patch set every run of the current code records once, standing for all the patches `since` reads. */
export const TURN_PATCH_SET = 'turn-patches-4';

/** Structured output through finish: a patch of its own, newer than the current set (taken at the run's start, before any activity). */
export const OUTPUT_FINISH_PATCH = 'finish-output-schema';

/** The oldest patch set the support window holds: a run recorded with it took every patch from before the sets. */
export const THIRD_PATCH_SET = 'turn-patches-3';

/**
 * Since this patch consecutive calls of a step that are safe to run together run at the same time
 * (step-calls.ts). Taken directly, never through `since`: runs recorded with the current set
 * before it ran them one at a time. Taken at a run's first step with two such calls to run, so a
 * run that has none records no marker; `patched` answers the same for the rest of the run.
 */
export const PARALLEL_CALLS_PATCH = 'parallel-tool-calls';

/** Whether this run's parallel-safe calls run together (the `parallel-tool-calls` patch). */
export function parallelToolCalls(): boolean {
  return patched(PARALLEL_CALLS_PATCH);
}

/**
 * Since this patch memory (long-term and working) goes after the conversation and the system
 * message holds only what the agent's definition sets, so a provider's prompt cache serves it
 * from step to step (system-message.ts). Taken directly, at a run's first step that has memory
 * to send: without memory both layouts are the same, so such a run records no marker.
 */
export const CACHE_PREFIX_PATCH = 'cache-prefix';

/** Whether this run sends memory after the conversation (the `cache-prefix` patch). */
export function cachePrefix(): boolean {
  return patched(CACHE_PREFIX_PATCH);
}

/**
 * The current set, for a turn whose input names it. A worker that does not read `patchSet` (an
 * older one, in a rolling deploy) may have begun the run and recorded the set's marker: a replay
 * takes it (patched() answers from history then, and records nothing where there is none), or the
 * marker left unmatched would be a non-determinism error. A run going forward records none.
 */
function setFromInput(): true {
  if (workflowInfo().unsafe.isReplaying) patched(TURN_PATCH_SET);
  return true;
}

/** Takes the turn's patches: the set's marker first, as every run in the window recorded it. */
export function turnPatches(input: TurnInput): TurnPatches {
  // Taken once, first: a run that has it skips every patched() call of `since` (no marker of theirs).
  // A turn whose starter named the set in its input takes it from there, with no marker at all.
  const current = input.patchSet === TURN_PATCH_SET ? setFromInput() : patched(TURN_PATCH_SET);
  // Only a run recorded by the third set's code has its marker (the current code never records it).
  if (!current) deprecatePatch(THIRD_PATCH_SET);
  const since = (patchId: string) => current || patched(patchId);
  // Every turn judges with version 3 over the rules its session froze (an unversioned or version 2
  // policy is brought to it by exactPolicy).
  const policy = exactPolicy(input.config.policy ?? parsePolicy(undefined));
  const messageStore = !input.config.inlineHistory;
  // Turns of the current set recorded before it have no marker and keep finish's text answer.
  const outputFinish = input.config.output !== undefined && patched(OUTPUT_FINISH_PATCH);
  return { policy, messageStore, outputFinish, since };
}
