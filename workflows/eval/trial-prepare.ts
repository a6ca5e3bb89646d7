/**
 * What an eval's trials share of their turns' preparation: the worker's skills and custom tools,
 * asked once a run (the local activity prepareEvalTrials, before its first trial starts) instead
 * of by each trial's prepareTurn. Such a trial's turn runs no prepareTurn: a local
 * activity, its marker and a store write fewer a trial. Only a trial with nothing of its own to
 * prepare shares: no fixtures (its workspace does not exist, so there is no snapshot to take), no
 * skills folders, no memories to preload, no recorded run to start from, and a scripted model's
 * script small enough to travel with each model call (it has no stored copy).
 */
import { patched, proxyLocalActivities } from '@temporalio/workflow';
import type { EvalTrialsPrepared } from '../../deterministic/activity-types';
import { isBlobArg } from '../../deterministic/conversation';
import type { EvalCase } from '../../deterministic/eval';
import type { TurnInput } from '../../deterministic/session';
import type { SessionConfig } from '../../deterministic/session-config';
import type { Activities } from '../activity-options';

const { prepareEvalTrials } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '500ms', maximumAttempts: 5 },
});

/** Trials whose turns their eval prepares (the patch of evals that do). */
export const TRIALS_PREPARED = 'eval-trials-prepared';

// A script past this many characters is sent once, by prepareTurn, not with every model call.
const CARRIED_SCRIPT_MAX = 4096;

/** Whether a trial has nothing of its own to prepare, so its turn can take what the run's trials share. */
function shareable(c: EvalCase, config: SessionConfig): boolean {
  if (Object.keys(c.fixtures).length || c.from || config.skills?.folders.length || (config.memory?.preload ?? 0) > 0) return false;
  const m = config.model;
  return m.provider !== 'scripted' || (!isBlobArg(m.script) && JSON.stringify(m.script ?? null).length <= CARRIED_SCRIPT_MAX);
}

/** The shared preparation of one run of an eval. */
export class TrialPreparation {
  private shared: EvalTrialsPrepared = {};

  /**
   * Asks, once and before the run starts any trial, when one of its trials can use it. Not at a
   * trial's start: raced against other trials' local activities, the order their trials' child
   * workflows start in would depend on which local activity answered first, which replay does
   * not reproduce.
   */
  async ask(trials: Array<{ c: EvalCase; config: SessionConfig }>): Promise<void> {
    const first = trials.find((t) => shareable(t.c, t.config));
    if (!first || !patched(TRIALS_PREPARED)) return;
    const agent = first.config.agent;
    // A failure is no trial's: each then prepares itself, as without the patch.
    this.shared = await prepareEvalTrials({ ...(agent !== undefined ? { agent } : {}) }).catch((): EvalTrialsPrepared => ({}));
  }

  /** What a trial's turn is given instead of running prepareTurn, or undefined: it prepares itself. */
  of(c: EvalCase, config: SessionConfig): TurnInput['prepared'] {
    const tools = this.shared.customTools;
    return tools && shareable(c, config) ? { ...this.shared, customTools: tools } : undefined;
  }
}
