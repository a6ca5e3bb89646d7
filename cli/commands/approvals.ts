/** `harness approve` / `harness deny`: decide pending tool calls from any process. */
import type { Command } from 'commander';
import { UsageError } from '../../lib/errors';
import type { CliContext } from '../context';
import { followTurn, waitRide, waitTimeoutOption } from '../wait';
import { WaitNotes } from '../wait-notes';
import { parseSessionId } from '../args';
import { approvalLine, grantLine, say } from '../output';

interface DecideFlags {
  json?: boolean;
  wait: boolean;
  /** `true`, or the words the person typed after `--always`. */
  always?: boolean | string;
  reason?: string;
  waitTimeout: number;
}

export function registerApprovals(program: Command, ctx: CliContext): void {
  const decide = async (sessionId: string, callId: string | undefined, approve: boolean, o: DecideFlags) => {
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
  };

  program
    .command('approve')
    .description("Approve a session's pending tool call (default: all pending calls of the step); waits for the turn like `run`")
    .argument('<session>', 'session id', parseSessionId)
    .argument('[callId]', 'the call to approve (see `harness status`)')
    .option(
      '--always [words]',
      'also allow it for the rest of this session: exactly this command (or host, or tool); with words, ' +
        'commands whose program and first arguments are those words (e.g. --always "git commit")',
    )
    .option('--json', 'print the turn result as JSON')
    .option('--no-wait', 'return as soon as the decision is delivered')
    .addOption(waitTimeoutOption())
    .action((sessionId: string, callId: string | undefined, o: DecideFlags) => decide(sessionId, callId, true, o));

  program
    .command('deny')
    .description("Deny a session's pending tool call (default: all pending calls); the model sees APPROVAL_DENIED with the reason")
    .argument('<session>', 'session id', parseSessionId)
    .argument('[callId]', 'the call to deny (see `harness status`)')
    .requiredOption('--reason <text>', 'why; shown to the model and kept in history')
    .option('--json', 'print the turn result as JSON')
    .option('--no-wait', 'return as soon as the decision is delivered')
    .addOption(waitTimeoutOption())
    .action((sessionId: string, callId: string | undefined, o: DecideFlags) => {
      if (!o.reason?.trim()) throw new UsageError('--reason must not be empty');
      return decide(sessionId, callId, false, o);
    });
}
