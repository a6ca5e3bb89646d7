/**
 * Whether the workflows that own a sandbox still run: the question the worker's sweeps ask
 * before removing a session's container and exec records (activities/sandbox/pool.ts).
 *
 * A sandbox is named by a session id, but not every such id is a running workflow's:
 *
 * - a session (and a fork or rerun, which are sessions) is the workflow `<id>`; its turns
 *   `<id>/turn-<n>` are its children and end with it;
 * - an eval trial the eval runs itself has no workflow of its own: its one turn is
 *   `<id>/turn-1`, whose parent is the eval (workflows/eval/eval.ts), and the eval uses the trial's
 *   sandbox before that turn starts and after it ends (fixtures, checks, closing it);
 * - an eval trial of older evals is the child workflow `<id>` (evalCaseWorkflow).
 *
 * So the sandbox is owned while `<id>` runs, or `<id>/turn-1` runs, or that turn's parent runs.
 * Describing a workflow is read from its history's own store, so it is never behind the way a
 * visibility listing can be. Anything but "not found" or an answer throws: the caller then
 * removes nothing.
 */
import { Client, WorkflowNotFoundError, type WorkflowExecutionDescription } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { formatTurnId } from '../deterministic/turn-id';

/** How long one question may take before the sweep gives up (and removes nothing). */
const ASK_TIMEOUT_MS = 10_000;

/** The owner question over the worker's own connection; one unanswered for `timeoutMs` throws. */
export function sandboxOwners(connection: NativeConnection, namespace: string, timeoutMs = ASK_TIMEOUT_MS): (sessionId: string) => Promise<boolean> {
  const client = new Client({ connection, namespace });
  const describe = async (workflowId: string): Promise<WorkflowExecutionDescription | undefined> => {
    try {
      return await client.withDeadline(Date.now() + timeoutMs, () => client.workflow.getHandle(workflowId).describe());
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return undefined;
      throw err;
    }
  };
  const running = (d: WorkflowExecutionDescription | undefined) => d?.status.name === 'RUNNING';
  return async (sessionId) => {
    if (running(await describe(sessionId))) return true;
    const turn = await describe(formatTurnId(sessionId, 1));
    if (!turn) return false;
    if (running(turn)) return true;
    const parent = turn.parentExecution?.workflowId;
    return !!parent && parent !== sessionId && running(await describe(parent));
  };
}
