/** `harness trace <id> [--json] [--full] [--otlp URL]`: the story of a session or a turn, from Temporal history. */
import { InvalidArgumentError, type Command } from 'commander';
import { EndpointError, exportedLine, exportSpans, otlpTracesUrl } from '../../lib/trace/otlp';
import { openMessageStore, type OpenedStore } from '../../lib/trace/payloads';
import { traceLines } from '../../lib/trace/render';
import type { CliContext } from '../context';
import { escapeForTerminal } from '../../lib/terminal/escape';
import { print, printJsonLines, say } from '../output';
import { parseSessionOrTurnId } from '../args';

/** An OTLP/HTTP base URL (http or https), as the traces URL to send to. */
export function parseOtlpUrl(value: string): URL {
  try {
    return otlpTracesUrl(value);
  } catch (err) {
    if (err instanceof EndpointError) throw new InvalidArgumentError(`${err.message} (the base URL of an OTLP/HTTP receiver, e.g. http://127.0.0.1:6006)`);
    throw err;
  }
}

export function registerTrace(program: Command, ctx: CliContext): void {
  program
    .command('trace')
    .description('The story of a session (every turn) or of one turn, rebuilt from its Temporal history: steps, model calls, tool calls, approvals, questions, compressions')
    .argument('<id>', 'a session id, or a turn id (<session>/turn-N)', parseSessionOrTurnId)
    .option('--json', 'one span per line: {trace_id, session_id, span_id, parent_id, type, name, start, end, duration_ms, status, input, output, error}')
    .option('--full', 'with the payloads: messages, whole arguments and results (read from the message store, DATABASE_URL or the embedded one under HARNESS_HOME)')
    .option('--otlp <url>', 'send the spans to an OpenTelemetry receiver over OTLP/HTTP (base URL, e.g. http://127.0.0.1:6006 for Phoenix; /v1/traces is added) instead of printing the story; with --json they are printed too', parseOtlpUrl)
    .action(async (id: string, o: { json?: boolean; full?: boolean; otlp?: URL }) => {
      const harness = await ctx.harness();
      const store: OpenedStore | undefined = o.full ? await openMessageStore(ctx.home, ctx.env) : undefined;
      try {
        const trace = await harness.trace(id, store ? { store } : {});
        for (const note of trace.notes) say(`note: ${note}`);
        if (o.otlp) {
          // Only what the trace holds leaves: payloads only when --full asked for them.
          const count = await exportSpans(trace.spans.map((s) => s.span), o.otlp, ctx.env);
          say(exportedLine(id, o.otlp, count));
          if (!o.json) return;
        }
        if (o.json) {
          printJsonLines(trace.spans.map((s) => s.span));
          return;
        }
        const color = Boolean(process.stdout.isTTY) && !ctx.env.NO_COLOR && ctx.env.TERM !== 'dumb';
        const lines = traceLines(trace, { full: Boolean(o.full), color, escape: escapeForTerminal });
        print(lines.flatMap((line, i) => (i ? ['\n', line] : [line]))); // one write, however long the trace
      } finally {
        if (store && 'close' in store) await store.close();
      }
    });
}
