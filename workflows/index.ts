/** Workflow entry point bundled for the worker. */
export { sessionWorkflow } from './session';
export { turnWorkflow } from './turn';
export { purgeWorkflow, storedSessionsWorkflow } from './purge';
export { evalWorkflow, evalCaseWorkflow } from './eval';
