/**
 * What a person is shown of a tool call they may approve: every argument, each escaped (so no
 * character in it can hide or reorder text), a long one cut with its size and the command that
 * prints it whole. The CLI's views (`status`, the prompt of `run` and `chat`, what `approve` and
 * `deny` print, the live lines) and the console's (its inbox and session view) all draw a call
 * from here: none of them can show the command and leave out the host or the environment.
 */
import { isBlobArg } from '../deterministic/conversation';
import { escapeForTerminal } from '../machine/terminal/escape';

/** A value whose one-line text is longer than this is cut in the views; `harness show` prints it whole. */
export const INLINE_MAX = 400;
/** What is shown of a value that is cut. */
export const CLIPPED_CHARS = 160;

/** One argument as a view shows it. */
export interface ArgView {
  /** The argument's name, escaped. */
  name: string;
  /** The value as one line of JSON (a string quoted), escaped; only its beginning when `clipped`. */
  text: string;
  /** Only the beginning is shown (the value is long, or stored and shown by a preview). */
  clipped: boolean;
  /** The whole value's size when it is clipped: `5000 characters`, `5000 bytes`. */
  size?: string;
}

/** A call's arguments as the views show them: the command on the call's own line when it is short, then every other argument. */
export interface CallView {
  /** A string `command` argument, escaped, shown beside the tool; absent when there is none or it is long. */
  headline?: string;
  /** Every argument not in the headline, in the order the model gave them. */
  args: ArgView[];
}

/** The call's view: every argument, none left out. */
export function callView(args: unknown): CallView {
  if (!args || typeof args !== 'object' || Array.isArray(args)) return { args: [argView('(arguments)', args)] };
  const entries = Object.entries(args as Record<string, unknown>);
  const command = (args as Record<string, unknown>).command;
  const headline = typeof command === 'string' && command.length <= INLINE_MAX ? escapeForTerminal(command) : undefined;
  return {
    ...(headline !== undefined ? { headline } : {}),
    args: entries.filter(([k]) => headline === undefined || k !== 'command').map(([k, v]) => argView(k, v)),
  };
}

/** One argument's view. */
function argView(name: string, value: unknown): ArgView {
  const shownName = escapeForTerminal(name);
  // Stored because it is large: history holds its size and first characters (the digest binds its hash).
  if (isBlobArg(value)) {
    return { name: shownName, text: `${escapeForTerminal(JSON.stringify(value.preview ?? '') ?? '""')}…`, clipped: true, size: `${value.bytes} bytes` };
  }
  const json = JSON.stringify(value) ?? String(value);
  if (json.length <= INLINE_MAX) return { name: shownName, text: escapeForTerminal(json), clipped: false };
  // Cut by code points, so no character is split in two.
  const head = Array.from(json).slice(0, CLIPPED_CHARS).join('');
  const size = typeof value === 'string' ? `${Array.from(value).length} characters` : `${json.length} characters of JSON`;
  return { name: shownName, text: `${escapeForTerminal(head)}…`, clipped: true, size };
}

/** The command that prints a call's every argument whole. */
export function showCommand(sessionId: string, callId: string): string {
  return `harness show ${sessionId} ${callId}`;
}

/** One argument as a line of text: `name: value`, and for a cut one its size and how to see it whole. */
export function argLine(a: ArgView, sessionId: string, callId: string): string {
  return `${a.name}: ${a.text}${a.clipped ? `  (${a.size}; in full: ${escapeForTerminal(showCommand(sessionId, callId))})` : ''}`;
}
