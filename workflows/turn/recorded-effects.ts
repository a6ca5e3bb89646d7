/**
 * A rerun's calls that leave the sandbox (deterministic/effects.ts) are answered from the record: the
 * recorded result becomes the call's result, and nothing runs, on the other system or here. They
 * are answered before the step's approvals, so nobody is asked about a call that is not made. A
 * call the record holds no result for is not made either: the rerun is offline.
 */
import { patched } from '@temporalio/workflow';
import { leavesSandbox } from '../../deterministic/effects';
import { toolError } from '../../deterministic/errors';
import type { TurnInput } from '../../deterministic/session';
import type { RecordedEffects } from '../../deterministic/fork';
import type { JudgedCall } from './judge';

/**
 * The recorded results this run answers with. Only a rerun's turn has them (and only one planned
 * since reruns answered from the record), so no other turn takes the patch's marker.
 */
export function recordedEffectsOf(input: TurnInput): RecordedEffects | undefined {
  return input.recordedEffects && patched('rerun-recorded-effects') ? input.recordedEffects : undefined;
}

/**
 * Gives each judged call of the step that leaves the sandbox its recorded result (matched by the
 * call's id, which numbers its step and place in the reply as the record's did, and its tool),
 * and marks it replayed. A call judged already (invalid, denied by the policy) keeps its result.
 */
export function answerFromRecord(judged: readonly JudgedCall[], recorded: RecordedEffects): void {
  for (const j of judged) {
    if (j.result || !j.def || !leavesSandbox(j.def.name, j.def.source)) continue;
    const r = recorded.calls.find((c) => c.callId === j.call.id && c.tool === j.call.name);
    if (r?.outcome) {
      j.result = { ...r.outcome };
      j.replayed = recorded.from;
      continue;
    }
    j.result = toolError('PERMISSION_DENIED', `Not made: a rerun answers calls of ${j.def.name} from the record of ${recorded.from}, and it holds no result for this call.`, {
      recoverable: false,
      suggestion: 'rerun with --live-effects to make calls that leave the sandbox (each is judged by the policy again)',
    });
  }
}
