/**
 * A model reply's text as it streams, written to the database (activities/store/model-streams.ts)
 * for readers on any machine: pieces are batched (a write at most every `flushMs`, sooner once
 * `flushBytes` wait; one write in flight per call), a call stores at most `maxBytes`, and the
 * call's end waits a bounded moment for the rest to be stored, so the text is there before the
 * reply is in history. Best effort by design: nothing here throws, a failed or refused write stops
 * the call's stream (later pieces would leave a hole), and a database that hangs costs the call
 * at most `closeWaitMs`. History keeps the finished reply; a stream lost, cut or never read loses
 * nothing.
 */
import type { ModelStreams, StreamCall } from '../store/model-streams';

/** How a call's stream is batched and bounded. */
export interface StreamLimits {
  flushMs: number;
  flushBytes: number;
  /** Text past this many bytes of one call's attempt is not stored (the reply in history has it). */
  maxBytes: number;
  /** How long the call's end waits for its last pieces to be stored. */
  closeWaitMs: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = { flushMs: 100, flushBytes: 8 * 1024, maxBytes: 1024 * 1024, closeWaitMs: 2_000 };

/** Rows older than this are deleted (a reader joining later gets the finished text only). */
export const STREAM_KEEP_MS = 6 * 3600_000;
/** A worker sweeps at its first streamed reply, then at most this often. */
const SWEEP_EVERY_MS = 15 * 60_000;

/** Writes one call's stream; see the module comment. */
export class ModelStreamWriter {
  private pending = '';
  private pendingBytes = 0;
  private taken = 0;
  private next: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private inflight: Promise<void> | undefined;
  private broken = false;
  private closed = false;

  constructor(
    private readonly streams: () => Promise<ModelStreams | undefined>,
    private readonly call: StreamCall,
    private readonly limits: StreamLimits = DEFAULT_STREAM_LIMITS,
  ) {}

  /** Takes a piece of the reply (never throws, never waits). */
  write(chunk: string): void {
    if (this.broken || this.closed || chunk === '') return;
    const room = this.limits.maxBytes - this.taken;
    if (room <= 0) return;
    const text = Buffer.byteLength(chunk, 'utf8') > room ? cutToBytes(chunk, room) : chunk;
    const bytes = Buffer.byteLength(text, 'utf8');
    this.pending += text;
    this.pendingBytes += bytes;
    // What did not fit closes the stream: the rest of the reply is history's.
    this.taken += text === chunk ? bytes : room;
    if (this.pendingBytes >= this.limits.flushBytes) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.limits.flushMs).unref();
  }

  /** Stores what waits and resolves once it is stored, failed, or `closeWaitMs` passed; never rejects. */
  async close(): Promise<void> {
    this.closed = true;
    this.flush();
    let timer: NodeJS.Timeout | undefined;
    const drained = (async () => {
      while (this.inflight) await this.inflight;
    })();
    await Promise.race([drained, new Promise<void>((resolve) => (timer = setTimeout(resolve, this.limits.closeWaitMs)))]);
    clearTimeout(timer);
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.inflight || this.broken || this.pending === '') return;
    const text = this.pending;
    this.pending = '';
    this.pendingBytes = 0;
    this.inflight = this.store(text)
      .catch(() => {
        this.broken = true;
      })
      .finally(() => {
        this.inflight = undefined;
        // Due meanwhile (its timer fired, enough waits, or the call ended): now.
        if (this.pending !== '' && (this.closed || !this.timer || this.pendingBytes >= this.limits.flushBytes)) this.flush();
      });
  }

  private async store(text: string): Promise<void> {
    const streams = await this.streams();
    if (!streams) {
      this.broken = true;
      return;
    }
    const seq = await streams.append(this.call, text, this.next);
    // Its place taken: another attempt writes this call; stop rather than interleave.
    if (seq === undefined) this.broken = true;
    else this.next = seq + 1;
  }
}

/** A worker's streams: a writer per call, and the sweep of stale rows. */
export class ModelStreamSink {
  private lastSweep = 0;
  private opened?: Promise<ModelStreams | undefined>;

  constructor(
    private readonly open: () => Promise<ModelStreams | undefined>,
    private readonly limits: StreamLimits = DEFAULT_STREAM_LIMITS,
    private readonly keepMs = STREAM_KEEP_MS,
  ) {}

  /** A writer for one call's attempt. */
  writer(call: StreamCall): ModelStreamWriter {
    this.sweepNow();
    return new ModelStreamWriter(() => this.streams(), call, this.limits);
  }

  /** The database's streams; a failure to open is tried again at the next write. */
  private streams(): Promise<ModelStreams | undefined> {
    this.opened ??= this.open().catch((err: unknown) => {
      this.opened = undefined;
      throw err;
    });
    return this.opened;
  }

  /** Deletes stale rows (a reply's stream matters for minutes): at the first call, then every SWEEP_EVERY_MS. */
  private sweepNow(): void {
    if (Date.now() - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = Date.now();
    void this.streams()
      .then((s) => s?.sweep(this.keepMs))
      .catch(() => undefined);
  }
}

/** The longest start of `text` of at most `bytes` UTF-8 bytes that does not split a character. */
export function cutToBytes(text: string, bytes: number): string {
  let lo = 0;
  let hi = Math.min(text.length, bytes);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (Buffer.byteLength(text.slice(0, mid), 'utf8') <= bytes) lo = mid;
    else hi = mid - 1;
  }
  // Not between the halves of a surrogate pair.
  const last = text.charCodeAt(lo - 1);
  return last >= 0xd800 && last <= 0xdbff ? text.slice(0, lo - 1) : text.slice(0, lo);
}
