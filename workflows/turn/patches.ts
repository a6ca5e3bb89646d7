/**
 * The turn's version decisions: which behaviours of turns recorded before a change a run keeps.
 *
 * A run started by the current code takes one marker, `turn-patches-4`, and with it every patch
 * below and every later one read through `since` (`model-handoff-queue`, whose own marker would
 * otherwise come after a local activity's) and `shell-cancel-waits`. Each `patched()` call costs a marker and a search-attribute update (Core upserts
 * TemporalChangeVersion for each, a visibility write on the server): twelve of each a turn
 * before, a third of an eval trial's events. A history with an earlier set's marker
 * (`turn-patches-3`, `turn-patches-2`, `turn-patches-1`) takes the patches that set stood for and
 * none that came after it (a later one is then its own `patched()` call, where it is read). A history with none was recorded before the sets: each patch is then its own
 * `patched()` call, taken where its marker is recorded, so older turns replay as they ran. The
 * early ones are taken here in their recorded order, before prepareTurn is scheduled;
 * `bounded-model-input` and `local-prepare-turn` come at prepareTurn (turn.ts),
 * `approvals-partial-notify` in the approvals handler (handlers.ts) and `local-model-call`
 * at the turn's first model call (model-call.ts).
 */
import { patched } from '@temporalio/workflow';
import { exactPolicy } from '../../deterministic/policy/decide';
import { parsePolicy, type Policy } from '../../deterministic/policy/schema';
import type { TurnInput } from '../../deterministic/session';

/** What the turn's early patches decided. */
export interface TurnPatches {
  /** The policy the turn judges with; absent for sessions recorded before the permission policy. */
  policy: Policy | undefined;
  /** Fast tools run as local activities (turns recorded before ran every tool as a regular activity). */
  localTools: boolean;
  /** The context is compressed past its threshold (turns recorded before never compressed). */
  compression: boolean;
  /** Calls get the harness's own ids (turns recorded before used the provider's). */
  harnessCallIds: boolean;
  /** A tool activity's timeout follows the tool's (turns recorded before had a fixed one). */
  perToolTimeouts: boolean;
  /** A tool activity that failed after its retries is a result the model sees (it failed the turn before). */
  toolFailuresAsResults: boolean;
  /** Tokens are estimated by script (turns recorded before counted 4 characters a token). */
  scriptAwareEstimate: boolean;
  /** The conversation is held by reference to the message store (turns recorded before carried it inline). */
  messageStore: boolean;
  /** The turn counts its own history events to decide continue-as-new (turns recorded before read Temporal's history length). */
  ownEventCount: boolean;
  /**
   * Whether the run takes the code of a later patch (`bounded-model-input`,
   * `approvals-partial-notify`): always in a run of the current code; in an older one, as its marker says.
   */
  since(patchId: string): boolean;
}

/** The patch set every run of the current code records once, standing for all the patches above. */
export const TURN_PATCH_SET = 'turn-patches-4';

/** The third patch set: the second set's patches and `local-model-call`. */
export const THIRD_PATCH_SET = 'turn-patches-3';

/** The second patch set: the first set's patches and `local-prepare-turn`. */
export const SECOND_PATCH_SET = 'turn-patches-2';

/** The first patch set and the patches it stood for: every one before `local-prepare-turn`. */
export const FIRST_PATCH_SET = 'turn-patches-1';
const FIRST_SET_PATCHES: ReadonlySet<string> = new Set([
  'permission-policy',
  'policy-exact',
  'local-fast-tools',
  'context-compression',
  'harness-call-ids',
  'per-tool-timeouts',
  'tool-failures-as-results',
  'script-aware-token-estimate',
  'message-store',
  'turn-own-event-count',
  'bounded-model-input',
  'approvals-partial-notify',
]);
const SECOND_SET_PATCHES: ReadonlySet<string> = new Set([...FIRST_SET_PATCHES, 'local-prepare-turn']);
const THIRD_SET_PATCHES: ReadonlySet<string> = new Set([...SECOND_SET_PATCHES, 'local-model-call']);

/** Takes the turn's early patches, in their recorded order. */
export function turnPatches(input: TurnInput): TurnPatches {
  // Taken once, first: a run that has it skips every patched() call below (no marker of theirs).
  const current = patched(TURN_PATCH_SET);
  // Only a run recorded by an earlier set's code has its marker (the current code never asks for one).
  const third = !current && patched(THIRD_PATCH_SET);
  const second = !current && !third && patched(SECOND_PATCH_SET);
  const first = !current && !third && !second && patched(FIRST_PATCH_SET);
  const since = (patchId: string) =>
    current || (third && THIRD_SET_PATCHES.has(patchId)) || (second && SECOND_SET_PATCHES.has(patchId)) || (first && FIRST_SET_PATCHES.has(patchId)) || patched(patchId);
  // Sessions recorded before the permission policy existed replay without it.
  const recordedPolicy = since('permission-policy') ? (input.config.policy ?? parsePolicy(undefined)) : undefined;
  // Turns recorded before the exact analysis judged with their policy's own version (which let
  // dash read what the policy parsed as bash); every turn since judges with version 3.
  const policy = recordedPolicy && since('policy-exact') ? exactPolicy(recordedPolicy) : recordedPolicy;
  const localTools = since('local-fast-tools');
  const compression = since('context-compression');
  const harnessCallIds = since('harness-call-ids');
  const perToolTimeouts = since('per-tool-timeouts');
  const toolFailuresAsResults = since('tool-failures-as-results');
  const scriptAwareEstimate = since('script-aware-token-estimate');
  const messageStore = since('message-store') && !input.config.inlineHistory;
  const ownEventCount = since('turn-own-event-count');
  return { policy, localTools, compression, harnessCallIds, perToolTimeouts, toolFailuresAsResults, scriptAwareEstimate, messageStore, ownEventCount, since };
}
