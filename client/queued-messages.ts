/**
 * How many messages sent while a turn runs it has not given to its model yet (the turn's state
 * query). Asked only for a turn that runs; no answer in time (no worker) leaves it unknown.
 */
import type { Client } from '@temporalio/client';
import { turnStateQuery } from '../deterministic/messages';

/** How long `status` waits for the turn to answer before showing the rest without the count. */
const QUEUED_QUERY_MS = 2_000;

/** The turn's queued messages (0 when none), or undefined when the turn did not answer in time. */
export async function queuedMessages(client: Client, turnId: string): Promise<number | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), QUEUED_QUERY_MS)));
  try {
    const state = await Promise.race([client.workflow.getHandle(turnId).query(turnStateQuery).catch(() => undefined), late]);
    return state ? (state.queued ?? 0) : undefined;
  } finally {
    clearTimeout(timer);
  }
}
