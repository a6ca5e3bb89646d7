/**
 * How the CLI speaks: results on stdout (JSON with --json), progress and notes on stderr. Every
 * writer here escapes what it is given (machine/terminal): commands pass text from models, tools,
 * servers and files straight in, and nothing they print can drive the terminal.
 */
import type { Usage } from '../deterministic/types';
import type { TurnResult } from '../deterministic/session';
import type { Pending, PendingApproval, TurnState } from '../deterministic/session-state';
import { escapeForTerminal } from '../machine/terminal/escape';
import { budgetLine } from '../deterministic/budget';
import { splitNotDeclared } from '../deterministic/errors';
import { argLine, callView } from '../machine/call-view';
import { Control, type Text } from '../machine/terminal/text';
import { writeErr, writeErrLine, writeJson, writeJsonLines, writeOut } from '../machine/terminal/write';
import { snakeKeys } from './json-casing';

/** Exit codes of the CLI contract. */
export const EXIT = { ok: 0, error: 1, usage: 2, waiting: 3 } as const;

/** A line for a person, on stderr so stdout stays machine-readable. */
export function say(line: Text): void {
  writeErrLine(line);
}

/** A prompt on stderr, without a line end: the person types after it. */
export function prompt(text: Text): void {
  writeErr(text);
}

/** A progress line on stderr redrawn in place (a terminal only): back to the line's start, no line end. */
export function sayInPlace(line: Text): void {
  writeErr([Control.carriageReturn, line]);
}

/** A result for a person on stdout (one line or several), with a line end. */
export function print(text: Text): void {
  writeOut([text, '\n']);
}

/** One JSON document on stdout (safe on a terminal: see escapeJsonForTerminal). */
export function printJson(value: unknown): void {
  writeJson(value);
}

/** One JSON document per line on stdout (`--json` streams of spans). */
export function printJsonLines(values: readonly unknown[]): void {
  writeJsonLines(values);
}

/** The `run --json` shape of a finished turn. */
export function turnJson(r: TurnResult) {
  return {
    session_id: r.sessionId,
    workflow_id: r.turnId,
    answer: r.answer,
    terminated_by: r.terminated_by,
    steps: r.steps,
    usage: r.usage,
    ...(r.error ? { error: r.error } : {}),
  };
}

/** The `run --json` shape of a turn waiting on a human. */
export function waitingJson(sessionId: string, s: TurnState) {
  return { session_id: sessionId, workflow_id: s.turnId, status: s.status, pending: snakeKeys(s.pending) };
}

/** Human summary line of a usage. */
export function usageLine(u: Usage): string {
  return `${u.total_tokens} tokens (${u.prompt_tokens} prompt, ${u.completion_tokens} completion)`;
}

/** Prints a finished turn for a person (answer on stdout, details on stderr). */
export function printTurn(r: TurnResult): void {
  print(r.answer);
  say(`[${r.turnId}] ${r.terminated_by} after ${r.steps} step${r.steps === 1 ? '' : 's'}, ${usageLine(r.usage)}`);
  // A refusal's hint (what to declare where) goes on the hint line that follows.
  if (r.error) say(`error: ${splitNotDeclared(r.error).problem}`);
}

/** Exit code for a finished turn: a failed turn is an error. */
export function turnExitCode(r: TurnResult): number {
  return r.terminated_by === 'failed' ? EXIT.error : EXIT.ok;
}

/**
 * A call that waits for approval, as lines: `callId: tool [command]  [risk …; rule …: reason]`,
 * then every other argument on a line of its own (machine/call-view.ts), a long one cut with its
 * size and the `harness show` command that prints it whole. Everything the model chose is
 * escaped: what a person approves is what they read, all of it.
 */
export function approvalLines(c: PendingApproval, sessionId: string): string[] {
  const v = callView(c.args);
  const what = v.headline !== undefined ? ` ${v.headline}` : v.args.length ? '' : ' (no arguments)';
  const head = escapeForTerminal(`${c.callId}: ${c.tool}${what}  [risk ${c.risk}; ${c.rule ? `rule ${c.rule}: ` : ''}${c.reason}]`);
  return [head, ...v.args.map((a) => `    ${argLine(a, sessionId, c.callId)}`)];
}

/** What an `--always` granted, as the turn recorded it (the command in it is model text: escaped). */
export function grantLine(grant: string): string {
  return escapeForTerminal(`granted for this session: ${grant}`);
}

/** Lines describing what a turn waits for, each call's first line starting with `prefix`, its arguments indented below. */
export function pendingLines(p: Pending, sessionId: string, prefix = ''): string[] {
  const of = subAgentOf(p);
  if (p.kind === 'question') return [`${prefix}question${of} (${p.callId}): ${escapeForTerminal(p.question)}`];
  if (p.kind === 'budget') return [`${prefix}budget${of}: ${budgetLine(p)}`];
  return p.calls.flatMap((c) => approvalLines(c, sessionId).map((l, i) => (i === 0 ? `${prefix}approval${of} ${l}` : l)));
}

/** ` of sub-agent lead › researcher` for a sub-agent's wait (agent names are the worker's: letters, digits, - and _), else nothing. */
export function subAgentOf(p: Pick<Pending, 'agent'>): string {
  return p.agent ? ` of sub-agent ${p.agent.path.join(' › ')}` : '';
}
