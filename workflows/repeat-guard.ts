/**
 * Detects the model repeating the same action: the same tool calls with the same arguments
 * `limit` times in a row earn one warning; one more repetition after that stops the turn.
 */
import { canonicalJson } from '../common/digest';
import type { ToolCall } from '../common/types';

/** Verdict for a step's tool calls. */
export type RepeatVerdict = 'ok' | 'warn' | 'stop';

/** What the guard remembers between steps (carried when a turn continues as new). */
export interface RepeatState {
  last: string;
  count: number;
  warned: boolean;
}

export class RepeatGuard {
  private last = '';
  private count = 0;
  private warned = false;

  constructor(
    private readonly limit: number,
    from?: RepeatState,
  ) {
    if (from) ({ last: this.last, count: this.count, warned: this.warned } = from);
  }

  /** The state to carry into a new run. */
  state(): RepeatState {
    return { last: this.last, count: this.count, warned: this.warned };
  }

  /** Records a step's calls and says whether it is a repetition worth warning about or stopping. */
  observe(calls: ToolCall[]): RepeatVerdict {
    const key = calls.map((c) => `${c.name}:${canonical(c.arguments)}`).join('|');
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

/** Argument text normalised so that key order and spacing do not hide a repetition. */
function canonical(args: string): string {
  try {
    return canonicalJson(JSON.parse(args));
  } catch {
    return args.trim();
  }
}
