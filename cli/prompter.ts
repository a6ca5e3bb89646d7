/**
 * How the CLI reaches a person at the terminal: a question, an approval showing every argument of
 * the call, a budget raise. `run`, `chat`, `retry`, `fork`, `rerun` and `approve` prompt through it.
 */
import { createInterface } from 'node:readline/promises';
import type { PendingApproval } from '../deterministic/session-state';
import type { BudgetBreach } from '../deterministic/budget';
import { escapeForTerminal } from '../machine/terminal/escape';
import { terminalString } from '../machine/terminal/text';
import { approvalLines, say } from './output';
import { askBudgetRaise } from './wait-budget';

/** A person's verdict on one call. */
export type Verdict = 'yes' | 'no' | 'always';

/** How to reach the person at the terminal; absent when nobody is there. */
export interface Prompter {
  /** `elsewhere` aborts the prompt (rejecting with its reason) when someone else answered meanwhile. */
  ask(question: string, elsewhere?: AbortSignal): Promise<string>;
  /** Shows the call, every argument of it (`sessionId` names it in the `harness show` hint of a long one), and asks. */
  approve(call: PendingApproval, elsewhere?: AbortSignal, sessionId?: string): Promise<Verdict>;
  /** How much to raise a budget the turn reached (in its unit); undefined: stop the turn. */
  raiseBudget?(p: BudgetBreach): Promise<number | undefined>;
}

/** The person's input ended (Ctrl-D) while a prompt waited for it. */
export class InputEndedError extends Error {
  override name = 'InputEndedError';
  constructor() {
    super('input ended');
  }
}

/** Reads answers from a line source (the terminal, or chat's own reader); `onEnd` runs when it ends. */
export function linePrompter(
  readLine: (prompt: string, signal?: AbortSignal) => Promise<string | undefined>,
  onEnd: () => never = () => {
    throw new InputEndedError();
  },
): Prompter {
  const line = async (prompt: string, signal?: AbortSignal): Promise<string> => {
    for (;;) {
      signal?.throwIfAborted();
      const text = await readLine(prompt, signal);
      signal?.throwIfAborted();
      if (text === undefined) return onEnd();
      if (text.trim()) return text.trim();
    }
  };
  return {
    ask: (question, signal) => line(`? ${escapeForTerminal(question, { keepNewlines: true })}\n> `, signal),
    async approve(call, signal, sessionId = '<session>') {
      const shown = approvalLines(call, sessionId).join('\n');
      for (;;) {
        const a = (await line(`approve ${shown}\n  [y]es / [n]o / [a]lways for this session > `, signal)).toLowerCase();
        if (['y', 'yes'].includes(a)) return 'yes';
        if (['n', 'no'].includes(a)) return 'no';
        if (['a', 'always'].includes(a)) return 'always';
      }
    },
    raiseBudget: (p) => askBudgetRaise(line, p),
  };
}

/** A prompter on the process terminal, or undefined when stdin/stdout are not a TTY (or JSON was asked). */
export function terminalPrompter(json: boolean): Prompter | undefined {
  if (json || !(process.stdin.isTTY && process.stdout.isTTY)) return undefined;
  return linePrompter(async (prompt, signal) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    try {
      // readline writes the prompt itself: escaped here like everything the writers print.
      return await rl.question(terminalString(prompt), signal ? { signal } : {});
    } catch (err) {
      // Ctrl-D (end of input) and Ctrl-C at the prompt abort the question: nothing was decided.
      // A decision from elsewhere aborts it too: the caller says who decided.
      if ((err as { code?: string }).code === 'ABORT_ERR') {
        say(''); // the cursor is still on the prompt line
        if (signal?.aborted) throw signal.reason;
        return undefined;
      }
      throw err;
    } finally {
      rl.close();
    }
  });
}
