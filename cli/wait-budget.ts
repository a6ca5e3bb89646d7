/**
 * A turn waiting for its budget, as `run`, `chat`, `answer`, `approve` and `deny` show it: the
 * commands that raise it or stop the turn when nobody is at a terminal (exit 3, like an
 * approval), or the question at the terminal.
 */
import { budgetLine, type BudgetBreach } from '../deterministic/budget';
import { parseBudgetAmount } from '../config/budget-amount';
import type { HarnessClient } from '../api/client';
import type { TroubleWait } from '../client/trouble-wait';
import { say } from './output';

/** Says what the turn waits for and how to decide it from another process. */
export function sayBudgetWait(sessionId: string, turnId: string, p: BudgetBreach): void {
  say(`[${turnId}] waiting for budget: ${budgetLine(p)}; the session keeps waiting.`);
  const amount = p.unit === 'usd' ? '+$<amount>' : '+<tokens>';
  say(`  raise: harness approve ${sessionId} --budget ${amount}    stop the turn (its work kept): harness deny ${sessionId} --reason "<why>"`);
}

/** Asks at the terminal how much to raise the budget by; undefined: stop the turn. */
export async function askBudgetRaise(line: (prompt: string) => Promise<string>, p: BudgetBreach): Promise<number | undefined> {
  const unit = p.unit === 'usd' ? '$' : '';
  for (;;) {
    const a = (await line(`${budgetLine(p)}\n  raise the ${p.scope} budget by (+${unit}N) or [s]top the turn > `)).trim().toLowerCase();
    if (['s', 'stop', 'n', 'no'].includes(a)) return undefined;
    try {
      const got = parseBudgetAmount(p.unit === 'usd' && !a.includes('$') ? `$${a.replace(/^\+/, '')}` : a, { raise: true });
      if (got.unit === p.unit) return got.amount;
    } catch {
      // Not an amount: ask again.
    }
  }
}

/** Raises or stops at the terminal's word; says what it did. */
export async function decideBudgetInline(harness: HarnessClient, sessionId: string, p: BudgetBreach, amount: number | undefined, troubleWait: TroubleWait | undefined): Promise<void> {
  const decision = amount === undefined ? { stop: true, reason: 'stopped at the terminal' } : { raise: { unit: p.unit, amount } };
  const { result } = await harness.decideBudget(sessionId, decision, { troubleWait });
  say(result.stopped ? 'the turn stops here (budget_exceeded); its work is kept' : `the ${result.scope} budget is now ${result.limit}${result.unit === 'usd' ? ' USD' : ' tokens'}`);
}
