/**
 * The turn's version decisions: which behaviours of turns recorded before a change a run keeps.
 * Each is a `patched()` marker, taken in the order recorded histories hold them and before
 * prepareTurn is scheduled. The turn's other patches stay where their markers are recorded:
 * `bounded-model-input` after prepareTurn (turn.ts), `approvals-partial-notify` in the approvals
 * handler (turn-humans.ts).
 */
import { patched } from '@temporalio/workflow';
import { exactPolicy } from '../common/policy/decide';
import { parsePolicy, type Policy } from '../common/policy/schema';
import type { TurnInput } from '../common/session';

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
}

/** Takes the turn's early patches, in their recorded order. */
export function turnPatches(input: TurnInput): TurnPatches {
  // Sessions recorded before the permission policy existed replay without it.
  const recordedPolicy = patched('permission-policy') ? (input.config.policy ?? parsePolicy(undefined)) : undefined;
  // Turns recorded before the exact analysis judged with their policy's own version (which let
  // dash read what the policy parsed as bash); every turn since judges with version 3.
  const policy = recordedPolicy && patched('policy-exact') ? exactPolicy(recordedPolicy) : recordedPolicy;
  const localTools = patched('local-fast-tools');
  const compression = patched('context-compression');
  const harnessCallIds = patched('harness-call-ids');
  const perToolTimeouts = patched('per-tool-timeouts');
  const toolFailuresAsResults = patched('tool-failures-as-results');
  const scriptAwareEstimate = patched('script-aware-token-estimate');
  const messageStore = patched('message-store') && !input.config.inlineHistory;
  const ownEventCount = patched('turn-own-event-count');
  return { policy, localTools, compression, harnessCallIds, perToolTimeouts, toolFailuresAsResults, scriptAwareEstimate, messageStore, ownEventCount };
}
