/**
 * `harness approve <session> --budget +N` and `harness deny <session>` on a turn that waits for
 * its budget: raise the budget it reached (the turn goes on) or stop the turn (it ends
 * `budget_exceeded`, keeping its work), then wait for it like `run`.
 */
import { budgetAmount, budgetLine, type BudgetUnit } from '../../deterministic/budget';
import { pendingBudget } from '../../client/budget-client';
import type { BudgetDecisionInput } from '../../deterministic/messages';
import type { CliContext } from '../context';
import { say } from '../output';
import { followTurn, commandTroubleWait } from '../wait';
import { WaitNotes } from '../wait-notes';
import type { DecideFlags } from './approvals';

/**
 * Raises (`raise`) or stops the turn's budget wait and follows the turn; with `onlyIfWaiting`
 * (a plain `deny`), returns false without doing anything when the session waits for no budget.
 */
export async function decideBudgetWait(
  ctx: CliContext,
  sessionId: string,
  raise: { unit: BudgetUnit; amount: number } | undefined,
  o: DecideFlags,
  onlyIfWaiting = false,
): Promise<boolean> {
  const timeoutMs = o.waitTimeout * 1000;
  const harness = await ctx.harness({ waits: true });
  const notes = new WaitNotes();
  const troubleWait = commandTroubleWait(ctx, notes, timeoutMs, `for session ${sessionId}`, '', `see whether it arrived with \`harness status ${sessionId}\``);
  if (onlyIfWaiting && !(await pendingBudget(harness.temporal, sessionId, troubleWait))) return false;
  const decision: BudgetDecisionInput = raise ? { raise } : { stop: true, ...(o.reason ? { reason: o.reason } : {}) };
  const { turnId, pending, result } = await harness.decideBudget(sessionId, decision, { troubleWait });
  if (!o.json) {
    say(
      result.stopped
        ? `stopped ${turnId}: ${budgetLine(pending)}; it ends budget_exceeded, its work kept`
        : `raised the ${result.scope} budget of ${turnId} to ${budgetAmount(result.unit, result.limit ?? 0)}`,
    );
  }
  process.exitCode = await followTurn(harness, sessionId, turnId, o, result.stopped ? 'stopped' : 'raised', { notes, ctx });
  return true;
}
