/** Workflow entry point bundled for the worker. */
export { sessionWorkflow } from './session/session';
export { turnWorkflow } from './turn/turn';
export { purgeWorkflow, storedSessionsWorkflow } from './session/purge';
export { evalWorkflow } from './eval/eval';
export { webhookWorkflow } from './webhook';
export { scheduledMessageWorkflow } from './schedule';
