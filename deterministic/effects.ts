/**
 * Which tool calls reach past the session's sandbox: what they do lands on other systems (a web
 * server, an MCP server, whatever a custom tool touches, the long-term memory other sessions
 * read), so running one again repeats it there. Calls of the other built-in tools change only
 * the session's own workspace, sandbox and state. A rerun answers the first kind from its record
 * and a fork does not carry grants for them (history/rerun.ts, history/fork.ts). Pure.
 */
import type { Rule } from './policy/schema';

/**
 * Built-in tools whose effects stay with the session: its workspace and sandbox, its working
 * memory, the turn itself, and reads (the clock, the skills, long-term memory searched). Any tool
 * not named here leaves the sandbox, so a tool added later is treated as reaching out until it is
 * listed.
 */
const SANDBOX_SIDE: ReadonlySet<string> = new Set([
  'finish',
  'ask_user',
  'remember',
  'get_current_time',
  'read_file',
  'write_file',
  'list_files',
  'run_shell',
  'recall',
  'use_skill',
]);

/**
 * Whether a call of this tool has effects outside the sandbox: http_request, remember_longterm,
 * every MCP tool (`mcp:<server>`, named `mcp__<server>__<tool>`) and custom tool (`custom`), and
 * any name that is not a built-in tool of the sandbox's side. `source` is the tool's when known.
 */
export function leavesSandbox(name: string, source?: string): boolean {
  if (source === 'custom' || source?.startsWith('mcp:')) return true;
  return !SANDBOX_SIDE.has(name);
}

/**
 * The session rules a forked session may keep: `--always` grants of tools whose effects stay in
 * the sandbox. A grant of a tool that reaches out (a host, an MCP tool, a custom tool) was given
 * for the conversation it was given in; a fork's conversation is another one (edited, another
 * model, other replies), so its calls of such tools are judged afresh.
 */
export function sandboxRules(rules: readonly Rule[]): { kept: Rule[]; dropped: Rule[] } {
  const kept: Rule[] = [];
  const dropped: Rule[] = [];
  for (const r of rules) (leavesSandbox(r.tool) ? dropped : kept).push(r);
  return { kept, dropped };
}
