/**
 * Detects the model repeating the same action: the same tool calls with the same arguments
 * `limit` times in a row earn one warning; one more repetition after that stops the turn.
 */
import { canonicalJson, sha256Hex } from '../../deterministic/digest';
import type { ToolCall } from '../../deterministic/types';
import { REPEAT_MAX_CANONICAL_CHARS, REPEAT_MAX_KEY_CHARS } from './replay-constants';

/** Verdict for a step's tool calls. */
export type RepeatVerdict = 'ok' | 'warn' | 'stop';

/** What the guard remembers between steps (carried when a turn continues as new). */
interface RepeatState {
  last: string;
  count: number;
  warned: boolean;
}

export class RepeatGuard {
  private last = '';
  private count = 0;
  private warned = false;

  /** `bounded`: a long fingerprint is kept as its hash, so the state carried across continue-as-new stays small. */
  constructor(
    private readonly limit: number,
    from?: RepeatState,
    private readonly bounded = false,
  ) {
    if (from) ({ last: this.last, count: this.count, warned: this.warned } = from);
  }

  /** The state to carry into a new run. */
  state(): RepeatState {
    return { last: this.last, count: this.count, warned: this.warned };
  }

  /** Records a step's calls and says whether it is a repetition worth warning about or stopping. */
  observe(calls: ToolCall[]): RepeatVerdict {
    // Bounded, normalising stops once a step's arguments pass MAX_CANONICAL_CHARS (see below).
    let left = this.bounded ? MAX_CANONICAL_CHARS : Infinity;
    const text = calls
      .map((c) => {
        const size = typeof c.arguments === 'string' ? c.arguments.length : 0;
        const normalise = size <= left;
        if (normalise) left -= size;
        return `${c.name}:${normalise ? canonical(c.arguments) : c.arguments.trim()}`;
      })
      .join('|');
    const key = this.bounded && text.length > MAX_KEY_CHARS ? `sha256:${sha256Hex(text)}` : text;
    this.count = key === this.last ? this.count + 1 : 1;
    this.last = key;
    if (this.count < this.limit) return 'ok';
    if (this.warned) return 'stop';
    this.warned = true;
    return 'warn';
  }

  /** The note shown to the model with the warning. */
  warning(calls: ToolCall[]): string {
    const names = [...new Set(calls.map((c) => c.name))].join(', ');
    return (
      `[harness] You have called ${names} with the same arguments ${this.count} times in a row and got the same outcome. ` +
      'Do something different (other arguments, another tool) or finish with what you have; repeating it again ends the turn.'
    );
  }
}

// How long a fingerprint is kept whole, and how much argument text a step's calls are normalised
// for: replay-relevant (replay-constants.ts).
const MAX_KEY_CHARS = REPEAT_MAX_KEY_CHARS;
const MAX_CANONICAL_CHARS = REPEAT_MAX_CANONICAL_CHARS;

/**
 * Argument text normalised so that key order and spacing do not hide a repetition. Text nested
 * too deep to normalise (the walk overflows the stack) is compared as written.
 */
function canonical(args: string): string {
  // Only a provider breaking the protocol sends anything but text; it must not fail the step,
  // not even an object whose toString is not a function (String() throws on it).
  if (typeof args !== 'string') return printable(args);
  try {
    return canonicalJson(JSON.parse(args));
  } catch {
    return args.trim();
  }
}

/** What String() gives (as fingerprints always were), or the object's tag where String() throws. */
function printable(value: unknown): string {
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
