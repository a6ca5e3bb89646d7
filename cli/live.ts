/**
 * The live view of a turn in a terminal: one line per step event as history records it (see
 * client/watch/live.ts), beside the wait that drives the turn, and the decisions others take while a
 * prompt here asks for the same thing (so the prompt can close, saying who decided).
 */
import type { Client } from '@temporalio/client';
import { watchTurn, type SpanChange } from '../client/watch/live';
import { liveLine } from '../client/watch/live-lines';
import type { Span } from '../history/trace/types';
import { escapeForTerminal } from '../machine/terminal/escape';
import { printJsonLines, prompt, say } from './output';
import { StreamPrinter } from './stream-print';
import { UserError } from '../machine/errors';

/** How the live view shows itself. */
interface LiveOptions {
  /** This terminal prompts for approvals and answers: their waits get no line of their own. */
  prompting: boolean;
  color: boolean;
  /** Each change as a JSON line on stdout (`--jsonl`) instead of a line for a person. */
  jsonl?: boolean;
  /** HARNESS_HOME: model text streamed to the workers' database (DATABASE_URL, else this home's embedded one) is shown as it arrives (stream-print.ts). */
  home?: string;
}

/** A decision (approval or answer) someone may take elsewhere while this terminal asks for it. */
interface Elsewhere {
  /** Aborts when the call's approval or question closes in history, whoever decided. */
  signal: AbortSignal;
  /** The closed approval or ask_user span, once there is one. */
  span(): Span | undefined;
  dispose(): void;
}

// Kept in cli/live-wanted.ts so deciding loads none of this; exported here for existing callers.
export { liveWanted, stderrColor } from './live-wanted';

/** Watches one turn and prints its events until stopped or the turn closes. */
export class LiveTurn {
  private readonly stopper = new AbortController();
  private readonly closedDecisions = new Map<string, Span>();
  private readonly waiters = new Map<string, () => void>();
  private readonly done: Promise<void>;
  private readonly streams?: StreamPrinter;

  constructor(
    client: Client,
    readonly turnId: string,
    private readonly o: LiveOptions,
  ) {
    if (o.home && !o.jsonl) this.streams = new StreamPrinter(o.home, (text) => prompt(text));
    this.done = watchTurn(client, turnId, { signal: this.stopper.signal, onChange: (c) => this.show(c) }).then(
      () => undefined,
      (err: unknown) => {
        // The live view is extra: the wait beside it still drives the turn and reports trouble.
        if (!this.stopper.signal.aborted) say(escapeForTerminal(`note: the live view stopped: ${(err as Error).message.split('\n')[0]}`));
      },
    );
  }

  private show(c: SpanChange): void {
    const s = c.span;
    if (c.change === 'closed' && (s.type === 'approval' || s.type === 'ask_user')) {
      const id = String(s.input.call_id ?? '');
      this.closedDecisions.set(id, s);
      this.waiters.get(id)?.();
    }
    if (this.o.jsonl) return printJsonLines([{ change: c.change, span: s }]);
    this.streams?.onChange(c);
    const line = liveLine(c, { escape: escapeForTerminal, color: this.o.color, prompting: this.o.prompting });
    if (line !== undefined) say(line);
  }

  /** Watches for the decision on `callId` arriving from elsewhere while a prompt here asks for it. */
  decision(callId: string): Elsewhere {
    const ac = new AbortController();
    const fire = () => ac.abort(new Error('decided elsewhere'));
    if (this.closedDecisions.has(callId)) fire();
    else this.waiters.set(callId, fire);
    return { signal: ac.signal, span: () => this.closedDecisions.get(callId), dispose: () => this.waiters.delete(callId) };
  }

  /** Lets the view show the turn's last events (up to `ms`), then stops it. */
  async finish(ms = 2_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.done, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
    this.stop();
    await this.done;
  }

  /** Stops at once. */
  stop(): void {
    this.stopper.abort();
    this.streams?.stop();
  }
}

/** The line that closes a prompt someone answered elsewhere: what they decided, who, when. */
function decidedElsewhereLine(span: Span | undefined, what: string): string {
  const out = (span?.output ?? {}) as { approved?: boolean; always?: boolean; by?: string; at?: string; answer?: unknown; reason?: string; timed_out?: boolean };
  const when = out.at ? ` at ${out.at.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}` : '';
  if (out.timed_out) return escapeForTerminal(`prompt closed: ${what}: nobody decided in time`);
  if (span?.type === 'ask_user') return escapeForTerminal(`prompt closed: ${what} was answered elsewhere${out.by ? ` by ${out.by}` : ''}${when}`);
  const verdict = out.approved ? `approved${out.always ? ' (always)' : ''}` : `denied${out.reason ? ` (${out.reason})` : ''}`;
  return escapeForTerminal(`prompt closed: ${what} was ${verdict} elsewhere${out.by ? ` by ${out.by}` : ''}${when}`);
}

/**
 * Asks at the prompt while watching for the same decision taken elsewhere (another shell, the
 * console): then the prompt closes with a line saying who decided, and undefined is returned.
 */
export async function promptOrElsewhere<T>(live: LiveTurn | undefined, callId: string, what: string, ask: (signal?: AbortSignal) => Promise<T>): Promise<T | undefined> {
  const elsewhere = live?.decision(callId);
  try {
    return await ask(elsewhere?.signal);
  } catch (err) {
    if (!elsewhere?.signal.aborted) throw err;
    say(decidedElsewhereLine(elsewhere.span(), what));
    return undefined;
  } finally {
    elsewhere?.dispose();
  }
}

/** Sends a decision; one that arrives after someone else decided is said in a line, not an error (undefined). */
export async function decidedOrElsewhere<T>(send: () => Promise<T>, what: string): Promise<T | undefined> {
  try {
    return await send();
  } catch (err) {
    if (!(err instanceof UserError) || !/not pending|no pending approval|not waiting for an answer|refused the request/.test(err.message)) throw err;
    say(escapeForTerminal(`${what}: already decided elsewhere (${err.message}); following the turn`));
    return undefined;
  }
}
