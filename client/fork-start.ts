/** Starting a forked session (`fork`, `rerun`) and reading how its workspace was prepared. */
import type { Client } from '@temporalio/client';
import type { SessionInput } from '../deterministic/session';
import type { SessionState } from '../deterministic/session-state';
import type { ForkPlan } from '../history/fork';
import { UsageError } from '../machine/errors';
import { sessionState } from './session-client';

/** How long a new fork may take to prepare (copy the conversation, restore files) before we stop waiting to say how. */
const PREPARE_WAIT_MS = 60_000;

/** Starts the forked session and returns its state once the fork is prepared (or undefined if that takes too long). */
export async function startForked(client: Client, taskQueue: string, plan: ForkPlan, sessionId: string): Promise<SessionState | undefined> {
  const input: SessionInput = { sessionId, config: plan.config, fork: plan.spec };
  try {
    await client.workflow.start('sessionWorkflow', { workflowId: sessionId, taskQueue, args: [input] });
  } catch (err) {
    if ((err as Error).name === 'WorkflowExecutionAlreadyStartedError') throw new UsageError(`session ${sessionId} already exists`, 'pick another --session id, or omit it');
    throw err;
  }
  return waitForState(client, sessionId, (s) => s.fork !== undefined, PREPARE_WAIT_MS);
}

/** Polls the session's state until `ready` holds; undefined after `timeoutMs`. */
export async function waitForState(client: Client, sessionId: string, ready: (s: SessionState) => boolean, timeoutMs: number): Promise<SessionState | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // Until its first workflow task ran, a new session may not answer queries yet.
    const state = await sessionState(client, sessionId).catch(() => undefined);
    if (state && ready(state)) return state;
    if (Date.now() > deadline) return undefined;
    await new Promise((r) => setTimeout(r, 200));
  }
}
