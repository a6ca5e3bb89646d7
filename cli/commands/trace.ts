/** `harness trace <id> [--json] [--full]`: the story of a session or a turn, from Temporal history. */
import { InvalidArgumentError, type Command } from 'commander';
import { loadTrace, TURN_ID } from '../../lib/trace';
import { openMessageStore, type OpenedStore } from '../../lib/trace/payloads';
import { renderTrace } from '../../lib/trace/render';
import type { CliContext } from '../context';
import { escapeForTerminal } from '../escape';
import { say } from '../output';
import { parseSessionId } from '../args';

/** A session id, or a turn id `<session>/turn-<n>`. */
export function parseTraceId(value: string): string {
  const turn = TURN_ID.exec(value);
  try {
    parseSessionId(turn ? turn[1]! : value);
  } catch {
    throw new InvalidArgumentError('expected a session id (letters, digits, ".", "_", "-") or a turn id (<session>/turn-N)');
  }
  return value;
}

export function registerTrace(program: Command, ctx: CliContext): void {
  program
    .command('trace')
    .description('The story of a session (every turn) or of one turn, rebuilt from its Temporal history: steps, model calls, tool calls, approvals, questions, compressions')
    .argument('<id>', 'a session id, or a turn id (<session>/turn-N)', parseTraceId)
    .option('--json', 'one span per line: {trace_id, session_id, span_id, parent_id, type, name, start, end, duration_ms, status, input, output, error}')
    .option('--full', 'with the payloads: messages, whole arguments and results (read from the message store, DATABASE_URL or the embedded one under HARNESS_HOME)')
    .action(async (id: string, o: { json?: boolean; full?: boolean }) => {
      const client = await ctx.client();
      const store: OpenedStore | undefined = o.full ? await openMessageStore(ctx.home, ctx.env) : undefined;
      try {
        const trace = await loadTrace(client, id, store ? { store } : {});
        for (const note of trace.notes) say(`note: ${note}`);
        if (o.json) {
          process.stdout.write(trace.spans.map((s) => `${JSON.stringify(s.span)}\n`).join(''));
          return;
        }
        const color = Boolean(process.stdout.isTTY) && !ctx.env.NO_COLOR && ctx.env.TERM !== 'dumb';
        process.stdout.write(renderTrace(trace, { full: Boolean(o.full), color, escape: escapeForTerminal }));
      } finally {
        if (store && 'close' in store) await store.close();
      }
    });
}
