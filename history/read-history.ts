/**
 * A run's history read from Temporal page by page, for everything that reads histories whole
 * (trace, cost, replay, retry, fork, watch). A page is one gRPC message, and the client takes
 * messages up to a limit (client/temporal.ts raises grpc-js's 4 MB default): a page over it is
 * asked for again with fewer events, down to one. Temporal pages by the batches it wrote events
 * in (an event with what it wrote along with it: signals that came together, an activity's
 * completion), so a batch over the limit by itself cannot be read: that is a one-line UserError
 * naming the workflow and the size, never a gRPC error or a stack trace.
 */
import type { Client } from '@temporalio/client';
import type { History } from '@temporalio/common/lib/proto-utils';
import { UserError } from '../machine/errors';

/** Events asked for per page (the server may give fewer: its own cap is a few hundred). */
const PAGE_EVENTS = 1_000;

// temporal.api.enums.v1.HistoryEventFilterType.CLOSE_EVENT
const CLOSE_EVENT = 2;
// grpc.status.RESOURCE_EXHAUSTED: what grpc-js answers a message over the receive limit with.
const RESOURCE_EXHAUSTED = 8;

/** A batch of a history's events is larger than the client takes in one message. */
export class HistoryBatchTooLarge extends UserError {
  constructor(
    readonly workflowId: string,
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(
      `${workflowId}: Temporal sends ${sizeText(bytes)} of its history in one piece (an event and those written with it), more than the ${sizeText(limit)} its client takes in one message`,
      `the rest of the history cannot be read past it; Temporal's Web UI or \`temporal workflow show --workflow-id '${workflowId}'\` may show it`,
    );
  }
}

interface ReadHistoryOptions {
  /** Events per page at most (default PAGE_EVENTS). */
  pageSize?: number;
  /** Only the run's close event (its result), if it has closed. */
  closeEvent?: boolean;
}

/** The history of a run (the latest run of the id without `runId`); Temporal's not-found error when there is none. */
export async function readHistory(client: Client, workflowId: string, runId?: string, opts: ReadHistoryOptions = {}): Promise<History> {
  const most = Math.max(1, opts.pageSize ?? PAGE_EVENTS);
  const events: NonNullable<History['events']> = [];
  let size = most;
  let nextPageToken: Uint8Array | undefined;
  for (;;) {
    let res: Awaited<ReturnType<Client['workflowService']['getWorkflowExecutionHistory']>>;
    try {
      res = await client.workflowService.getWorkflowExecutionHistory({
        namespace: client.options.namespace,
        execution: { workflowId, ...(runId ? { runId } : {}) },
        maximumPageSize: size,
        ...(opts.closeEvent ? { historyEventFilterType: CLOSE_EVENT } : {}),
        ...(nextPageToken ? { nextPageToken } : {}),
      });
    } catch (err) {
      const over = overLimit(err);
      if (!over) throw err;
      if (size === 1) throw new HistoryBatchTooLarge(workflowId, over.bytes, over.limit);
      // The same page again with fewer events: the token says where it starts, not how long it is.
      size = Math.max(1, Math.floor(size / 8));
      continue;
    }
    for (const e of res.history?.events ?? []) events.push(e);
    nextPageToken = res.nextPageToken?.length ? res.nextPageToken : undefined;
    if (!nextPageToken) return { events };
    size = Math.min(most, size * 2);
  }
}

/** The sizes in a "message larger than max" error: what came and what the client takes. */
function overLimit(err: unknown): { bytes: number; limit: number } | undefined {
  const e = err as { code?: unknown; details?: unknown; message?: unknown } | undefined;
  if (e?.code !== RESOURCE_EXHAUSTED) return undefined;
  const m = /larger than max \((\d+) vs\.? (\d+)\)/.exec(`${String(e.details ?? '')} ${String(e.message ?? '')}`);
  return m ? { bytes: Number(m[1]), limit: Number(m[2]) } : undefined;
}

function sizeText(bytes: number): string {
  return bytes < 1024 * 1024 ? `${Math.round(bytes / 1024)} KB` : `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
