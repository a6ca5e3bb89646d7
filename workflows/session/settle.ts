/**
 * A session's configuration settled before anything runs: the agent it names resolved by its
 * worker, its webhook checked against what the worker declared, a scripted model's script put
 * in the store. Each step runs once per session; a continued run carries the result.
 */
import { ApplicationFailure, deprecatePatch, isCancellation, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import { isBlobArg } from '../../deterministic/conversation';
import { AGENT_MISMATCH, AGENT_UNKNOWN, failureType, NOT_DECLARED, rootCauseMessage } from '../../deterministic/errors';
import type { createActivities } from '../../activities';
import { STORE_ACTIVITY } from '../activity-options';
import type { SessionTracker } from './tracker';

const { storeValue } = proxyActivities<ReturnType<typeof createActivities>>(STORE_ACTIVITY);
// A session's agent is resolved by its own worker, from what that worker's owner declared.
const { resolveAgent, checkNotify } = proxyLocalActivities<ReturnType<typeof createActivities>>({ startToCloseTimeout: '10 seconds', retry: { initialInterval: '1s', maximumAttempts: 3 } });

/** Settles the tracker's config: agent, webhook, stored script (in that order, as sessions recorded them). */
export async function settleConfig(sessionId: string, tracker: SessionTracker): Promise<void> {
  // A session that names an agent takes the agent's settings from its worker, once: the
  // resolved config is what it carries from then on (continue-as-new included). Histories from
  // before agents never name one, so they never reach this.
  if (tracker.config.agent !== undefined && !tracker.config.agentResolved) {
    try {
      tracker.useConfig(await resolveAgent({ sessionId, config: tracker.config }));
    } catch (err) {
      // An agent the worker lacks, or an input asking for more than the agent allows: refused before anything runs.
      const type = failureType(err);
      if (type === AGENT_UNKNOWN || type === AGENT_MISMATCH) throw ApplicationFailure.nonRetryable(rootCauseMessage(err), type);
      throw err;
    }
  }

  // A session with a webhook posts only to a URL its worker declared: refused before anything runs
  // otherwise (each delivery checks again). Histories from before webhooks never have one.
  const notify = tracker.config.notify;
  if (notify && !notify.declared) {
    try {
      tracker.useConfig({ ...tracker.config, notify: await checkNotify({ sessionId, notify }) });
    } catch (err) {
      if (failureType(err) === NOT_DECLARED) throw ApplicationFailure.nonRetryable(rootCauseMessage(err), NOT_DECLARED);
      throw err;
    }
  }

  // A scripted model's script is stored once: turns and later runs carry its reference only.
  // (The deprecated patches: every session of the support window ran this code, docs/durability.md.)
  const model = tracker.config.model;
  if (model.provider === 'scripted' && !isBlobArg(model.script)) {
    deprecatePatch('script-in-store');
    try {
      const script = await storeValue({ sessionId, value: model.script });
      tracker.useConfig({ ...tracker.config, model: { ...model, script } });
    } catch (err) {
      // A store down for the whole budget: the session goes on with its script inline, as
      // sessions did before the store, rather than failing.
      if (isCancellation(err)) throw err;
      deprecatePatch('script-store-outage');
    }
  }
}
