/**
 * The model_text_delta events of a followed turn: the text its running model calls stream, read
 * from the database the workers store it in (stream-source.ts), between the marks history gives
 * (call-marks.ts): from a call's `call_running` mark its stored pieces are read as they come (the
 * reader wakes on the database's notification), and at its `call_ended` mark whatever is left,
 * before the call's model_text. A call's pieces take the position of its running mark: `seq` is
 * the mark's count of events plus the piece's own number, so the same pieces always have the same
 * positions. Best effort: a source that cannot be opened or read gives no deltas, never a failure.
 */
import type { ModelStreamSource, StreamChunk, StreamWatch } from '../../activities/store/model-streams';
import type { CallMark } from './call-marks';
import type { ModelTextDeltaEvent } from './event-types';

/** A call seen running: where its pieces go, and the next piece to read. */
interface RunningCall {
  mark: CallMark;
  next: number;
}

/** Reads the deltas of one turn's running calls; see the module comment. */
export class ModelDeltas {
  private readonly running = new Map<string, RunningCall>();
  private source?: Promise<ModelStreamSource | undefined>;
  private watch?: StreamWatch;
  private unavailable = false;

  constructor(
    private readonly turnId: string,
    private readonly open?: () => Promise<ModelStreamSource | undefined>,
  ) {
    if (!open) this.unavailable = true;
  }

  /** Whether a call runs whose text may still come. */
  get active(): boolean {
    return !this.unavailable && this.running.size > 0;
  }

  /** A call was seen running: its text is read from now on. */
  started(mark: CallMark): void {
    if (!this.unavailable) this.running.set(keyOf(mark), { mark, next: 0 });
  }

  /** A call was seen ended: the pieces of it not given yet. */
  async ended(mark: CallMark): Promise<ModelTextDeltaEvent[]> {
    const call = this.running.get(keyOf(mark));
    this.running.delete(keyOf(mark));
    return call ? this.read(call) : [];
  }

  /** The pieces of the running calls stored since the last read. */
  async poll(): Promise<ModelTextDeltaEvent[]> {
    const out: ModelTextDeltaEvent[] = [];
    for (const call of [...this.running.values()]) out.push(...(await this.read(call)));
    return out;
  }

  /** Resolves once more text may be stored (or the signal aborted). */
  async changed(signal: AbortSignal): Promise<void> {
    const source = await this.opened();
    if (!source) return;
    this.watch ??= source.watch(this.turnId);
    await this.watch.changed(signal);
  }

  /** Closes the source (when one was opened). */
  async close(): Promise<void> {
    this.watch?.dispose();
    const source = await this.source?.catch(() => undefined);
    await source?.close().catch(() => undefined);
  }

  private async read(call: RunningCall): Promise<ModelTextDeltaEvent[]> {
    const source = await this.opened();
    if (!source) return [];
    let chunks: StreamChunk[];
    try {
      chunks = await source.read(this.turnId, call.mark.step, call.mark.callIndex, call.next);
    } catch {
      return []; // the database is away: the finished text comes with history
    }
    if (chunks.length) call.next = chunks[chunks.length - 1]!.seq + 1;
    const { step, callIndex, offset, given } = call.mark;
    return chunks.map((c) => ({ type: 'model_text_delta', turnId: this.turnId, offset, seq: given + c.seq, at: c.at, step, callIndex, attempt: c.attempt, text: c.text }));
  }

  private async opened(): Promise<ModelStreamSource | undefined> {
    this.source ??= (this.open?.() ?? Promise.resolve(undefined)).catch(() => undefined);
    const source = await this.source;
    if (!source) {
      this.unavailable = true;
      this.running.clear();
    }
    return source;
  }
}

function keyOf(m: CallMark): string {
  return `${m.step}/${m.callIndex}`;
}
