/** `harness trace <id> [--json] [--full] [--otlp URL]`: the story of a session or a turn, from Temporal history. */
import { InvalidArgumentError, type Command } from 'commander';
import { EndpointError, otlpTracesUrl } from '../../history/trace/otlp-endpoint';
import type { CliContext } from '../context';
import type { TraceFlags } from '../actions/trace';
import { parseSessionOrAnyTurnId } from '../args';

/** An OTLP/HTTP base URL (http or https), as the traces URL to send to. */
function parseOtlpUrl(value: string): URL {
  try {
    return otlpTracesUrl(value);
  } catch (err) {
    if (err instanceof EndpointError) throw new InvalidArgumentError(`${err.message} (the base URL of an OTLP/HTTP receiver, e.g. http://127.0.0.1:6006)`);
    throw err;
  }
}

// The action loads its implementation (the trace builder; with --otlp, OpenTelemetry) when it runs.
export function registerTrace(program: Command, ctx: CliContext): void {
  program
    .command('trace')
    .description('The story of a session (every turn) or of one turn, rebuilt from its Temporal history: steps, model calls, tool calls, approvals, questions, compressions')
    .argument('<id>', 'a session id, or a turn id (<session>/turn-N, or a sub-agent\'s <session>/turn-N/agent-<call id>)', parseSessionOrAnyTurnId)
    .option('--json', 'one span per line: {trace_id, session_id, span_id, parent_id, type, name, start, end, duration_ms, status, input, output, error}')
    .option('--full', 'with the payloads: messages, whole arguments and results (read from the message store, DATABASE_URL or the embedded one under HARNESS_HOME)')
    .option('--follow', 'then print each step event as it happens (with --json, one {change, span} line each) until the session or turn closes, or Ctrl-C')
    .option('--otlp <url>', 'send the spans to an OpenTelemetry receiver over OTLP/HTTP (base URL, e.g. http://127.0.0.1:6006 for Phoenix; /v1/traces is added) instead of printing the story; with --json they are printed too', parseOtlpUrl)
    .action(async (id: string, o: TraceFlags) => (await import('../actions/trace')).showTrace(ctx, id, o));
}
