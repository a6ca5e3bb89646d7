/** What `harness trace` does (cli/commands/trace.ts defines the command and loads this when it runs). */
import { exportedLine, exportSpans } from '../../history/trace/otlp';
import { openMessageStore, type OpenedStore } from '../../client/store-reader';
import { traceLines } from '../../history/trace/render';
import type { CliContext } from '../context';
import { escapeForTerminal } from '../../machine/terminal/escape';
import { print, printJsonLines, say } from '../output';
import { follow } from './watch';
import { UsageError } from '../../machine/errors';
import { readUntil } from '../../client/trouble-wait';
import { commandTroubleWait } from '../wait';
import { WaitNotes } from '../wait-notes';
import { DEFAULT_WAIT_TIMEOUT_SEC } from '../wait-options';

export interface TraceFlags {
  json?: boolean;
  full?: boolean;
  otlp?: URL;
  follow?: boolean;
}

export async function showTrace(ctx: CliContext, id: string, o: TraceFlags): Promise<void> {
  // An export sends what has happened; what follows is the continuous export's job.
  if (o.otlp && o.follow) throw new UsageError('--follow cannot be combined with --otlp: an export sends the trace as it stands', '`harness dev` with OTEL_EXPORTER_OTLP_ENDPOINT set exports each turn as it closes');
  // Following waits, as `status --follow` does: through a Temporal that is down or restarting,
  // from the first read on (the follow itself rides out what comes after).
  const harness = await ctx.harness(o.follow ? { waits: true } : {});
  const store: OpenedStore | undefined = o.full ? await openMessageStore(ctx.home, ctx.env) : undefined;
  try {
    // Sent to a receiver with the payloads: each model call carries the whole request it got.
    const load = () => harness.trace(id, store ? { store, ...(o.otlp ? { wholeInput: true } : {}) } : {});
    const troubleWait = commandTroubleWait(ctx, new WaitNotes(), DEFAULT_WAIT_TIMEOUT_SEC * 1000, `for ${id}`, '', `try again with \`harness trace ${id} --follow\``);
    const trace = o.follow ? await readUntil(harness.temporal, load, troubleWait) : await load();
    for (const note of trace.notes) say(`note: ${note}`);
    if (o.otlp) {
      // Only what the trace holds leaves: payloads only when --full asked for them.
      const count = await exportSpans(trace.spans.map((s) => s.span), o.otlp, ctx.env);
      say(exportedLine(id, o.otlp, count));
      if (!o.json) return;
    }
    if (o.json) printJsonLines(trace.spans.map((s) => s.span));
    else {
      const color = Boolean(process.stdout.isTTY) && !ctx.env.NO_COLOR && ctx.env.TERM !== 'dumb';
      const lines = traceLines(trace, { full: Boolean(o.full), color, escape: escapeForTerminal });
      print(lines.flatMap((line, i) => (i ? ['\n', line] : [line]))); // one write, however long the trace
    }
    // Then what happens next, from history as it grows: the spans printed are not printed again.
    if (o.follow) await follow(harness.temporal, id, { json: Boolean(o.json), known: trace.spans.map((s) => s.span), home: ctx.home });
  } finally {
    if (store && 'close' in store) await store.close();
  }
}
