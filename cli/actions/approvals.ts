/** What `harness approve` and `harness deny` do (cli/commands/approvals.ts defines them and loads this when one runs). */
import type { CliContext } from '../context';
import { followTurn, commandTroubleWait } from '../wait';
import { terminalPrompter } from '../prompter';
import { WaitNotes } from '../wait-notes';
import { approvalLines, EXIT, grantLine, say } from '../output';
import type { BudgetUnit } from '../../deterministic/budget';
import type { PendingApproval } from '../../deterministic/session-state';
import { pendingApprovals } from '../../client/session-status';
import { UsageError, UserError } from '../../machine/errors';
import { recordShown, shownDigests, wasShown } from '../shown-calls';
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

/**
 * Decides pending calls of the session, then waits for the turn like `run`. `wanted` names them
 * by call id or digest; without, the one pending call is decided only if this user was shown it
 * as it is now (cli/shown-calls.ts): otherwise, and whenever several wait, a terminal asks about
 * each, and without one nothing is decided (exit 2, naming the calls and the command). The
 * decision carries each call's digest as read here, so the turn refuses it if the call changed.
 */
export async function decide(ctx: CliContext, sessionId: string, wanted: string[], approve: boolean, o: DecideFlags): Promise<void> {
  // A turn waiting for its budget: `approve --budget +N` raises it, a plain `deny` stops the turn.
  if (o.budget) return void (await decideBudgetWait(ctx, sessionId, o.budget, o));
  if (!approve && !wanted.length && (await decideBudgetWait(ctx, sessionId, undefined, o, true))) return;
  // Delivering the decision and waiting for the turn ride out trouble alike, each bounded by --wait-timeout.
  const timeoutMs = o.waitTimeout * 1000;
  const harness = await ctx.harness({ waits: true });
  const notes = new WaitNotes();
  const troubleWait = commandTroubleWait(ctx, notes, timeoutMs, `for session ${sessionId}`, '', `see whether it arrived with \`harness status ${sessionId}\``);
  const pending = await pendingApprovals(harness.temporal, sessionId, troubleWait);
  if (!pending.calls.length) throw new UserError(`session ${sessionId} has no pending approval (status: ${pending.status})`, `see \`harness status ${sessionId}\``);
  const verb = approve ? 'approve' : 'deny';
  const chosen = await choose(ctx, sessionId, pending.calls, wanted, verb, o);
  if (!chosen.length) {
    say(`nothing was decided; the session keeps waiting (see \`harness status ${sessionId}\`)`);
    return void (process.exitCode = EXIT.waiting);
  }
  const { turnId, calls, granted } = await harness.decide(
    sessionId,
    {
      // Exactly these calls, each bound by the digest of what was shown: never "all pending".
      calls: chosen.map((c) => ({ callId: c.callId, digest: c.digest ?? '' })),
      approve,
      ...(o.reason ? { reason: o.reason } : {}),
      ...(o.always ? { always: true } : {}),
      ...(typeof o.always === 'string' ? { pattern: o.always } : {}),
    },
    { troubleWait },
  );
  const status = approve ? 'approved' : 'denied';
  // Say exactly what was decided, every argument of it, and what an --always now allows without asking.
  if (!o.json) for (const c of calls) approvalLines(c, sessionId).forEach((l, i) => say(i === 0 ? `${status} ${l}` : l));
  if (!o.json) for (const g of granted) say(grantLine(g));
  process.exitCode = await followTurn(harness, sessionId, turnId, o, status, { notes, ctx });
}

/** The pending calls this decision is for: named ones, or the one this user saw; asked about at a terminal when in doubt. */
async function choose(ctx: CliContext, sessionId: string, pending: PendingApproval[], wanted: string[], verb: 'approve' | 'deny', o: DecideFlags): Promise<PendingApproval[]> {
  const ids = pending.map((c) => c.callId).join(', ');
  const shown = shownDigests(ctx.home, sessionId);
  let chosen: PendingApproval[];
  let doubtful: PendingApproval[];
  if (wanted.length) {
    chosen = [];
    for (const w of wanted) {
      const c = pending.find((p) => p.callId === w || (p.digest !== undefined && p.digest === w.toLowerCase()));
      if (!c) {
        throw new UserError(
          `session ${sessionId} refused the request: call ${w} is not pending (unknown or already decided); pending: ${ids}`,
          `see the pending calls with \`harness status ${sessionId}\``,
        );
      }
      if (!chosen.includes(c)) chosen.push(c);
    }
    // Named by id, a call shown here with other arguments (a retried step asked again) is not the one the user meant.
    doubtful = chosen.filter((c) => !wanted.includes(c.digest ?? '') && shown.has(c.callId) && !wasShown(shown, c));
  } else {
    chosen = pending;
    doubtful = pending.length > 1 ? pending : pending.filter((c) => !wasShown(shown, c));
  }
  if (!doubtful.length) return chosen;
  const prompter = terminalPrompter(Boolean(o.json));
  if (!prompter) throw refusal(sessionId, doubtful, pending, verb, wanted.length > 0);
  // At a terminal: show each call whole and ask; only the ones the person says yes to are decided.
  const yes: PendingApproval[] = chosen.filter((c) => !doubtful.includes(c));
  for (const c of doubtful) {
    approvalLines(c, sessionId).forEach((l, i) => say(i === 0 ? `pending ${l}` : l));
    recordShown(ctx.home, sessionId, [c]);
    for (;;) {
      const a = (await prompter.ask(`${verb} ${c.callId} as shown above? [y]es / [n]o`)).toLowerCase();
      if (['y', 'yes'].includes(a)) {
        yes.push(c);
        break;
      }
      if (['n', 'no'].includes(a)) break;
    }
  }
  return chosen.filter((c) => yes.includes(c));
}

/** Without a terminal: nothing is decided, and the error says which calls wait and how to decide them by id. */
function refusal(sessionId: string, doubtful: PendingApproval[], pending: PendingApproval[], verb: 'approve' | 'deny', named: boolean): UsageError {
  const list = doubtful.map((c) => `${c.callId} (${c.tool})`).join(', ');
  const why = named
    ? `changed since you were shown ${doubtful.length === 1 ? 'it' : 'them'}`
    : pending.length > 1
      ? `${pending.length} calls are pending; say which`
      : 'it is not the call you were last shown';
  const command = `harness ${verb} ${sessionId} ${doubtful.map((c) => c.callId).join(' ')}${verb === 'deny' ? ' --reason "<why>"' : ''}`;
  const see = doubtful.length === 1 ? `see it whole with \`harness show ${sessionId} ${doubtful[0]!.callId}\`` : `see them with \`harness status ${sessionId}\` (each whole with \`harness show ${sessionId} <callId>\`)`;
  return new UsageError(`nothing was decided: pending in session ${sessionId}: ${list}; ${why}`, `${see}, then: ${command}`);
}
