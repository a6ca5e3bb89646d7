/**
 * Streamed model text in a live view: while a model call's span runs, the text its worker stores
 * in the database (client/watch/stream-source.ts: DATABASE_URL, else the embedded database of this
 * HARNESS_HOME) is read as it comes (woken by the database, or every 100 ms on the embedded one) and
 * written on one growing line; when the span closes, the rest of the reply (from history's finished
 * text) ends that line, then the call's own line follows. Nothing here is needed for correctness:
 * a call too quick to be seen running, a stream lost, or no database to read shows just the
 * finished line.
 */
import type { SpanChange } from '../client/watch/live';
import { openStreamSource, type ModelStreamSource } from '../client/watch/stream-source';
import { escapeForTerminal } from '../machine/terminal/escape';

/** The call whose text is shown. */
interface Tail {
  spanId: string;
  stop: AbortController;
  /** The text written so far (of `attempt`). */
  text: string;
  attempt?: number;
}

/** Prints the text of running model calls through `write` (no line ends added but the last). */
export class StreamPrinter {
  private tail?: Tail;
  private source?: Promise<ModelStreamSource | undefined>;

  constructor(
    private readonly home: string,
    private readonly write: (text: string) => void,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  /** Starts or ends the text of a model call as its span opens or closes; call before printing the change's line. */
  onChange(c: SpanChange): void {
    const s = c.span;
    if (s.type !== 'llm_call') return;
    if (c.change === 'opened' && !this.tail) {
      const turnId = c.turnId;
      if (!turnId || typeof s.input.step !== 'number') return;
      const tail: Tail = { spanId: s.span_id, stop: new AbortController(), text: '' };
      this.tail = tail;
      void this.follow(tail, turnId, s.input.step, Number(s.input.call_index ?? 0));
      return;
    }
    if (c.change === 'closed' && this.tail?.spanId === s.span_id) {
      // The rest of the reply from its finished text (the last pieces may not have been read yet).
      const content = (s.output as { content?: unknown } | null)?.content;
      if (this.tail.text && typeof content === 'string' && content.startsWith(this.tail.text)) this.print(this.tail, content.slice(this.tail.text.length));
      this.end();
    }
  }

  /** Ends any call's text and closes the database connection (the view stops). */
  stop(): void {
    this.end();
    const source = this.source;
    this.source = undefined;
    void source?.then((s) => s?.close()).catch(() => undefined);
  }

  private end(): void {
    const t = this.tail;
    if (!t) return;
    this.tail = undefined;
    t.stop.abort();
    if (t.text) this.write('\n');
  }

  private async follow(t: Tail, turnId: string, step: number, callIndex: number): Promise<void> {
    this.source ??= openStreamSource(this.env, () => this.home).catch(() => undefined);
    const source = await this.source;
    if (!source || t.stop.signal.aborted) return;
    const watch = source.watch(turnId);
    try {
      for (let next = 0; !t.stop.signal.aborted; ) {
        const chunks = await source.read(turnId, step, callIndex, next).catch(() => []);
        for (const c of chunks) {
          if (t.stop.signal.aborted) return;
          // A request sent again starts its text over, on a line of its own.
          if (t.attempt !== undefined && c.attempt !== t.attempt && t.text) {
            this.write('\n');
            t.text = '';
          }
          t.attempt = c.attempt;
          this.print(t, c.text);
          next = c.seq + 1;
        }
        await watch.changed(t.stop.signal);
      }
    } finally {
      watch.dispose();
    }
  }

  private print(t: Tail, text: string): void {
    if (!text) return;
    // Indented like its own later lines, with no marker: a glyph saying "arriving" would stay on
    // the line once the reply is whole (the call's line that follows says it ended).
    if (!t.text) this.write('    ');
    t.text += text;
    // The model's text, escaped like everything else; its own line breaks kept, indented.
    this.write(escapeForTerminal(text, { keepNewlines: true }).replace(/\n/g, '\n    '));
  }
}
