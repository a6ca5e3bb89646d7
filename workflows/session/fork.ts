/** A forked session's first turn: the recorded turn's state at the fork step, as a resumed run. */
import { type TurnInput } from '../../deterministic/session';
import { NO_USAGE } from '../../deterministic/usage';
import { type ForkPrepared, type ForkSpec } from '../../deterministic/fork';

/** What the session needs to start a fork's first turn. */
export interface ForkStart {
  userMessage: string;
  /** Overrides of the first turn's input: it resumes at the step with the copied conversation. */
  turn: Pick<TurnInput, 'resume' | 'memory' | 'modelCallBase'> & Pick<Partial<TurnInput>, 'sessionRules' | 'recordedDecisions' | 'recordedEffects' | 'maxSteps'>;
}

/** The first turn's input overrides: it resumes at the fork step with the copied conversation and the record's limit. */
export function forkResume(f: ForkSpec, p: ForkPrepared): ForkStart {
  return {
    userMessage: f.userMessage,
    turn: {
      memory: f.memory,
      modelCallBase: f.modelCallBase,
      // Forks planned before the spec carried a limit have none: their turns replay as recorded.
      ...(f.maxSteps !== undefined ? { maxSteps: f.maxSteps } : {}),
      ...(f.sessionRules.length ? { sessionRules: f.sessionRules } : {}),
      ...(f.replay?.decisions.length ? { recordedDecisions: f.replay.decisions } : {}),
      // A rerun answers its calls that leave the sandbox from the record (prepareFork stored the results).
      ...(p.recordedEffects ? { recordedEffects: p.recordedEffects } : {}),
      resume: {
        step: f.from.step,
        usage: NO_USAGE,
        modelCalls: 0,
        failedSteps: 0,
        lastContent: '',
        repeat: { last: '', count: 0, warned: false },
        memory: f.memory,
        sessionRules: f.sessionRules,
        compressions: [],
        toolCalls: [],
        storedToolCalls: [],
        conversation: p.conversation,
      },
    },
  };
}
