/**
 * Model calls a local activity handed on (workflows/turn/model-call.ts): the request goes on, and the
 * callModel activity that follows takes it by its key and waits for the same reply, so a slow
 * call is neither sent twice nor paid for twice. The registry is this process's: the activity
 * reaches it through the worker's own hand-off queue (workers/handoff-queue.ts), which the local
 * outcome names. A call nobody takes (its worker was too slow to take the activity, which then
 * called again from the shared queue) is stopped and forgotten after a while.
 */
import { randomUUID } from 'node:crypto';

/** What the registry needs of a call: whose it is, and how to stop it. */
interface HandedCall {
  readonly input: { turnId: string; callIndex: number };
  abort(): void;
}

/** How long a handed-on call waits to be taken (its activity comes within seconds, or gives up on this worker far sooner than this). */
const HANDOFF_KEEP_MS = 5 * 60_000;

export class ModelHandoffs<T extends HandedCall> {
  private readonly calls = new Map<string, { call: T; expiry: NodeJS.Timeout }>();

  constructor(private readonly keepMs = HANDOFF_KEEP_MS) {}

  /** Keeps the call under a new key, which the workflow passes to the callModel activity. */
  put(call: T): string {
    const key = `${call.input.turnId}#${call.input.callIndex}#${randomUUID().slice(0, 8)}`;
    const expiry = setTimeout(() => {
      // Not taken: the activity ran elsewhere (which called again), or never ran.
      this.calls.delete(key);
      call.abort();
    }, this.keepMs);
    expiry.unref();
    this.calls.set(key, { call, expiry });
    return key;
  }

  /** The call under `key`, once: undefined when it was kept by another worker or has expired. */
  take(key: string): T | undefined {
    const held = this.calls.get(key);
    if (!held) return undefined;
    this.calls.delete(key);
    clearTimeout(held.expiry);
    return held.call;
  }

  /** Calls waiting to be taken. */
  get size(): number {
    return this.calls.size;
  }
}
