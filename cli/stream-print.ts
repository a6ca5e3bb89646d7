/**
 * Streamed model text in a live view: while a model call's span runs, its stream file (see
 * machine/model-stream.ts) is read every 50 ms and what arrived is written as it comes, on one
 * growing line; the call's own line follows once history has the finished message. Nothing
 * here is needed for correctness: a call too quick to be seen running, or a stream lost, shows
 * just the finished line.
 */
import type { SpanChange } from '../client/watch/live';
import { StreamTail, streamFile } from '../machine/model-stream';
import { escapeForTerminal } from '../machine/terminal/escape';

/** How often a running call's stream is read. */
const TAIL_MS = 50;

/** Prints the text of running model calls of one HARNESS_HOME through `write` (no line ends added but the last). */
export class StreamPrinter {
  private tail?: { spanId: string; reader: StreamTail; timer: NodeJS.Timeout; wrote: boolean };

  constructor(
    private readonly home: string,
    private readonly write: (text: string) => void,
  ) {}

  /** Starts or ends the tail of a model call as its span opens or closes; call before printing the change's line. */
  onChange(c: SpanChange): void {
    const s = c.span;
    if (s.type !== 'llm_call') return;
    if (c.change === 'opened' && !this.tail) {
      const turnId = c.turnId;
      if (!turnId || typeof s.input.step !== 'number') return;
      const reader = new StreamTail(streamFile(this.home, turnId, s.input.step as number, Number(s.input.call_index ?? 0)));
      const tail = { spanId: s.span_id, reader, wrote: false, timer: setInterval(() => this.flush(), TAIL_MS) };
      this.tail = tail;
      return;
    }
    if (c.change === 'closed' && this.tail?.spanId === s.span_id) this.stop();
  }

  /** Ends any tail (the view stops). */
  stop(): void {
    if (!this.tail) return;
    this.flush();
    clearInterval(this.tail.timer);
    if (this.tail.wrote) this.write('\n');
    this.tail = undefined;
  }

  private flush(): void {
    const t = this.tail;
    if (!t) return;
    const text = t.reader.read();
    if (!text) return;
    if (!t.wrote) this.write('  … ');
    t.wrote = true;
    // The model's text, escaped like everything else; its own line breaks kept, indented.
    this.write(escapeForTerminal(text, { keepNewlines: true }).replace(/\n/g, '\n    '));
  }
}
