/**
 * Detects the model repeating the same action: the same tool calls with the same arguments
 * `limit` times in a row earn one warning; one more repetition after that stops the turn.
 */
import type { ToolCall } from '../common/types';

/** Verdict for a step's tool calls. */
export type RepeatVerdict = 'ok' | 'warn' | 'stop';

export class RepeatGuard {
  private last = '';
  private count = 0;
  private warned = false;

  constructor(private readonly limit: number) {}

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
    return JSON.stringify(sortKeys(JSON.parse(args)));
  } catch {
    return args.trim();
  }
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.keys(v as object)
        .sort()
        .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
    );
  }
  return v;
}
