/** What `harness approve` and `harness deny` do (cli/commands/approvals.ts defines them and loads this when one runs). */
import type { CliContext } from '../context';
import { followTurn, waitRide } from '../wait';
import { WaitNotes } from '../wait-notes';
import { approvalLine, grantLine, say } from '../output';
import type { BudgetUnit } from '../../common/budget';
import { decideBudgetWait } from './budget';

export interface DecideFlags {
  json?: boolean;
  wait: boolean;
  /** `true`, or the words the person typed after `--always`. */
  always?: boolean | string;
  reason?: string;
  waitTimeout: number;
  /** `approve --budget +N`: raise the budget the turn waits on. */
  budget?: { unit: BudgetUnit; amount: number };
}

/** Decides the session's pending calls (all of the step, or `callId`), then waits for the turn like `run`. */
export async function decide(ctx: CliContext, sessionId: string, callId: string | undefined, approve: boolean, o: DecideFlags): Promise<void> {
  // A turn waiting for its budget: `approve --budget +N` raises it, a plain `deny` stops the turn.
  if (o.budget) return void (await decideBudgetWait(ctx, sessionId, o.budget, o));
  if (!approve && !callId && (await decideBudgetWait(ctx, sessionId, undefined, o, true))) return;
  // Delivering the decision and waiting for the turn ride out trouble alike, each bounded by --wait-timeout.
  const timeoutMs = o.waitTimeout * 1000;
  const harness = await ctx.harness({ waits: true });
  const notes = new WaitNotes();
  const ride = waitRide(ctx, notes, timeoutMs, `for session ${sessionId}`, '', `see whether it arrived with \`harness status ${sessionId}\``);
  const { turnId, calls, granted } = await harness.decide(
    sessionId,
    {
      ...(callId ? { callIds: [callId] } : {}),
      approve,
      ...(o.reason ? { reason: o.reason } : {}),
      ...(o.always ? { always: true } : {}),
      ...(typeof o.always === 'string' ? { pattern: o.always } : {}),
    },
    { ride },
  );
  const status = approve ? 'approved' : 'denied';
  // Say exactly what was decided: the person sees what their decision applied to, and what
  // an --always now allows without asking.
  if (!o.json) for (const c of calls) say(`${status} ${approvalLine(c)}`);
  if (!o.json) for (const g of granted) say(grantLine(g));
  process.exitCode = await followTurn(harness, sessionId, turnId, o, status, { notes, ctx });
}
