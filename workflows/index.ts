/**
 * Workflow entry point bundled for the worker. Each workflow type's module is required when a
 * workflow of that type starts: the SDK evaluates the bundle's modules once for every workflow
 * (preloaded ones aside, machine/workflow-bundle.ts), so a turn, which is what an eval's every
 * trial runs, evaluates its own modules and not the session's, the eval's or the webhook's.
 */
import type * as Session from './session/session';
import type * as Turn from './turn/turn';
import type * as Purge from './session/purge';
import type * as Eval from './eval/eval';
import type * as Webhook from './webhook';
import type * as Schedule from './schedule';

// `require` of a module of the bundle: webpack resolves it when it bundles, so it reads nothing
// at run time and is as deterministic as an import. This file requires nothing else.
/* eslint-disable no-restricted-globals */

export function sessionWorkflow(...args: Parameters<typeof Session.sessionWorkflow>): ReturnType<typeof Session.sessionWorkflow> {
  return (require('./session/session') as typeof Session).sessionWorkflow(...args);
}

export function turnWorkflow(...args: Parameters<typeof Turn.turnWorkflow>): ReturnType<typeof Turn.turnWorkflow> {
  return (require('./turn/turn') as typeof Turn).turnWorkflow(...args);
}

export function purgeWorkflow(...args: Parameters<typeof Purge.purgeWorkflow>): ReturnType<typeof Purge.purgeWorkflow> {
  return (require('./session/purge') as typeof Purge).purgeWorkflow(...args);
}

export function storedSessionsWorkflow(...args: Parameters<typeof Purge.storedSessionsWorkflow>): ReturnType<typeof Purge.storedSessionsWorkflow> {
  return (require('./session/purge') as typeof Purge).storedSessionsWorkflow(...args);
}

export function evalWorkflow(...args: Parameters<typeof Eval.evalWorkflow>): ReturnType<typeof Eval.evalWorkflow> {
  return (require('./eval/eval') as typeof Eval).evalWorkflow(...args);
}

export function webhookWorkflow(...args: Parameters<typeof Webhook.webhookWorkflow>): ReturnType<typeof Webhook.webhookWorkflow> {
  return (require('./webhook') as typeof Webhook).webhookWorkflow(...args);
}

export function scheduledMessageWorkflow(...args: Parameters<typeof Schedule.scheduledMessageWorkflow>): ReturnType<typeof Schedule.scheduledMessageWorkflow> {
  return (require('./schedule') as typeof Schedule).scheduledMessageWorkflow(...args);
}
