/** What `harness show` does (cli/commands/show.ts defines it and loads this when it runs). */
import type { CliContext } from '../context';
import { callDetail, type CallDetail } from '../../client/call-detail';
import { INLINE_MAX } from '../../machine/call-view';
import { openMessageStore } from '../../client/store-reader';
import { escapeForTerminal } from '../../machine/terminal/escape';
import { EXIT, print, printJson, say } from '../output';
import { recordShown } from '../shown-calls';

export interface ShowFlags {
  json?: boolean;
}

/** Prints the call, every argument whole, and notes a pending one as shown to this user. */
export async function show(ctx: CliContext, sessionId: string, callId: string, o: ShowFlags): Promise<void> {
  const harness = await ctx.harness();
  const c = await callDetail(harness.temporal, sessionId, callId, () => openMessageStore(ctx.home, ctx.env));
  if (o.json) printJson(detailJson(c));
  else print(detailLines(c).join('\n'));
  if (c.problem) {
    say(`error: ${escapeForTerminal(c.problem)}`);
    say(`hint: run it where the worker's message store is reachable (DATABASE_URL, or HARNESS_HOME as the worker has it)`);
    process.exitCode = EXIT.error;
    return;
  }
  // Seen whole: `approve <session>` may now decide it without naming it, as long as it stays as shown.
  if (c.pending && c.digest !== undefined) recordShown(ctx.home, sessionId, [{ callId: c.callId, digest: c.digest }]);
}

function detailJson(c: CallDetail) {
  return {
    session_id: c.sessionId,
    turn_id: c.turnId,
    call_id: c.callId,
    tool: c.tool,
    pending: c.pending,
    state: c.state,
    ...(c.digest !== undefined ? { digest: c.digest } : {}),
    ...(c.risk !== undefined ? { risk: c.risk } : {}),
    ...(c.rule !== undefined ? { rule: c.rule } : {}),
    ...(c.reason !== undefined ? { reason: c.reason } : {}),
    args: c.args,
    ...(c.problem ? { problem: c.problem } : {}),
  };
}

/**
 * The call for a person: a header, then each argument. A short one-line value stands beside its
 * name (JSON: a string quoted); any other is said with its size, then its lines below, each
 * behind `  | ` so that no line of it can pass for one of ours. Everything is escaped (tabs kept).
 */
function detailLines(c: CallDetail): string[] {
  const e = (t: string) => escapeForTerminal(t, { keepTabs: true });
  const lines = [
    e(`call ${c.callId} of session ${c.sessionId}: ${c.tool}`),
    e(`state: ${c.state}`),
    ...(c.risk !== undefined || c.reason !== undefined ? [e(`asked: risk ${c.risk ?? '?'}; ${c.rule ? `rule ${c.rule}: ` : ''}${c.reason ?? ''}`)] : []),
    ...(c.digest !== undefined ? [`digest: ${e(c.digest)}`] : []),
  ];
  const args = c.args && typeof c.args === 'object' && !Array.isArray(c.args) ? Object.entries(c.args as Record<string, unknown>) : [['(arguments)', c.args] as const];
  if (!args.length) lines.push('arguments: none');
  for (const [name, value] of args) lines.push(...argumentLines(name, value));
  return lines;
}

function argumentLines(name: string, value: unknown): string[] {
  const e = (t: string) => escapeForTerminal(t, { keepTabs: true });
  const json = JSON.stringify(value) ?? String(value);
  const oneLine = typeof value !== 'string' || !value.includes('\n');
  if (oneLine && json.length <= INLINE_MAX) return [`${e(name)}: ${escapeForTerminal(json)}`];
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  const body = text.split('\n');
  const size =
    typeof value === 'string' ? `${Array.from(value).length} characters, ${Buffer.byteLength(value, 'utf8')} bytes, ${body.length} line(s)` : `${json.length} characters of JSON`;
  return [`${e(name)}: ${size}:`, ...body.map((l) => `  | ${e(l)}`)];
}
