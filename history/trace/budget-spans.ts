/**
 * A turn's waits for its budget as `budget` spans under the step whose model call waited: what
 * the budget was, what was spent and what the call might cost, then how it ended — raised (by
 * whom, by how much), stopped, or nobody deciding in time.
 */
import type { BudgetBreach } from '../../deterministic/budget';
import type { Timeline, UpdateItem, Wait } from './timeline';
import { makeSpan, type BuiltSpan, type TurnContext } from './types';

/** The budget spans of a step, oldest first. */
export function budgetSpans(ctx: TurnContext, step: number, stepKey: string): BuiltSpan[] {
  const t = ctx.timeline;
  const waits = t.waits.filter((w) => w.step === step && w.pending.kind === 'budget');
  return waits.map((w, i) => ({ span: budgetSpan(ctx, stepKey, w, i, decisionOf(t, w)) }));
}

/** The decideBudget update accepted while this wait was open. */
function decisionOf(t: Timeline, w: Wait): UpdateItem | undefined {
  return t.updates.find((u) => u.name === 'decideBudget' && u.failure === undefined && u.at >= w.at && (w.endedAt === undefined || u.at <= w.endedAt));
}

function budgetSpan(ctx: TurnContext, stepKey: string, w: Wait, index: number, u: UpdateItem | undefined): BuiltSpan['span'] {
  const b = w.pending as { kind: 'budget' } & BudgetBreach;
  const args = (u?.args ?? {}) as { raise?: { unit: string; amount: number }; stop?: boolean; reason?: string };
  const open = w.endedAt === undefined && w.timedOutAt === undefined;
  const running = open && ctx.running;
  const decision = u ? (args.stop ? 'stopped' : 'raised') : w.timedOutAt !== undefined ? 'timed_out' : open ? 'pending' : 'ended';
  return makeSpan(ctx, `${stepKey}/budget${index ? `/${index}` : ''}`, stepKey, {
    type: 'budget',
    name: `budget ${b.scope}`,
    start: w.at,
    ...(w.endedAt !== undefined ? { end: w.endedAt } : w.timedOutAt !== undefined ? { end: w.timedOutAt } : {}),
    status: running ? 'running' : 'ok',
    input: { scope: b.scope, unit: b.unit, limit: b.limit, spent: b.spent, estimate: b.estimate },
    output: running
      ? null
      : {
          decision,
          ...(u ? { by: u.identity, at: new Date(u.at).toISOString() } : {}),
          ...(args.raise ? { raised_by: args.raise.amount } : {}),
          ...(args.reason ? { reason: args.reason } : {}),
        },
    error: null,
  });
}
