/**
 * Running a turn while watching its history for failed workflow tasks: Temporal retries such a
 * task forever, so waiting for the result would just hang. A failure fails the test at once with
 * the task's error and the stuck turn is terminated (it would keep the worker busy otherwise).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import type { TurnResult } from '../../deterministic/session';
import type { SessionConfig } from '../../deterministic/session-config';
import type { ChatMessage, ToolResult } from '../../deterministic/types';
import { decideApprovals, sendMessage } from '../../client/session-client';
import { waitForTurn, type TurnOutcome } from '../../client/turn-wait';
import type { TestHarness } from './harness';

/** The failure messages of the failed workflow tasks in a workflow's history (latest run). */
export async function taskFailures(client: Client, workflowId: string): Promise<string[]> {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  return events.flatMap((e) => {
    const f = e.workflowTaskFailedEventAttributes;
    return f ? [`${f.cause ?? ''}: ${f.failure?.message ?? 'no message'}`.slice(0, 500)] : [];
  });
}

/** Throws once the workflow has a failed workflow task; resolves when `done()` says stop. */
async function watch(client: Client, workflowId: string, done: () => boolean): Promise<never | void> {
  while (!done()) {
    const failed = await taskFailures(client, workflowId).catch(() => []);
    if (failed.length) {
      await client.workflow.getHandle(workflowId).terminate('workflow task failed (test)').catch(() => undefined);
      throw new Error(`workflow task of ${workflowId} failed: ${failed[0]}`);
    }
    await sleep(200);
  }
}

/**
 * Sends a message and waits for the turn's end (approving every asked call when `approve`),
 * failing fast on a failed workflow task; then checks the turn's and the session's histories hold
 * none. Returns the result with its messages and records read back from the store.
 */
export async function watchedTurn(h: TestHarness, sessionId: string, config: SessionConfig, text: string, opts: { approve?: boolean } = {}): Promise<TurnResult> {
  h.declareUsed(config);
  const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config, text });
  let stop = false;
  const watcher = watch(h.client, turnId, () => stop);
  watcher.catch(() => undefined);
  try {
    let out: TurnOutcome = await Promise.race([waitForTurn(h.client, turnId, { pollMs: 100 }), watcher as Promise<never>]);
    while (out.kind === 'waiting') {
      const p = out.state.pending;
      if (!opts.approve || p?.kind !== 'approvals') throw new Error(`turn waits unexpectedly: ${JSON.stringify(p).slice(0, 300)}`);
      await decideApprovals(h.client, sessionId, { calls: p.calls.map((c) => ({ callId: c.callId, digest: c.digest ?? '' })), approve: true });
      out = await Promise.race([waitForTurn(h.client, turnId, { pollMs: 100 }), watcher as Promise<never>]);
    }
    stop = true;
    const failures = [...(await taskFailures(h.client, turnId)), ...(await taskFailures(h.client, sessionId))];
    if (failures.length) throw new Error(`workflow task failed: ${failures[0]}`);
    return await h.complete(out.result);
  } finally {
    stop = true;
  }
}

/** The tool results the model was sent, in order. */
export function toolResults(messages: ChatMessage[]): ToolResult[] {
  return messages.flatMap((m) => (m.role === 'tool' ? [JSON.parse(m.content) as ToolResult] : []));
}
