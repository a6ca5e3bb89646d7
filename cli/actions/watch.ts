/**
 * Watching from any process: `status --follow` and `trace --follow` attach to a session or a turn
 * and print each step event as history records it (client/watch/live.ts), until it closes or Ctrl-C;
 * `harness sessions` lists each session's own state (client/session-list.ts).
 */
import type { Client } from '@temporalio/client';
// Types only: follow() loads the watch code when it runs, so `sessions` and `status` without
// --follow (which import this module) never pay for it.
import type { SpanChange, WatchOptions } from '../../client/watch/live';
import type { Span } from '../../history/trace/types';
import { listSessions, type SessionRow, type SessionRowState } from '../../client/session-list';
import { UserError } from '../../machine/errors';
import { escapeForTerminal } from '../../machine/terminal/escape';
import { print, printJson, printJsonLines, say } from '../output';
import type { CliContext } from '../context';
import { WaitNotes } from '../wait-notes';
import { commandTroubleWait } from '../wait';
import { readUntil } from '../../client/trouble-wait';
import { writeOut } from '../../machine/terminal/write';
import { isAnyTurnId } from '../../deterministic/turn-id';

/** How a follow prints. */
export interface FollowPrint {
  json?: boolean;
  /** Spans already printed (a trace): reported again only when they change. */
  known?: readonly Span[];
  /** Only what happens from now on (status: its lines already said the rest). */
  fromNow?: boolean;
  /** HARNESS_HOME, to show model text as workers stream it (from DATABASE_URL, else this home's embedded database). */
  home?: string;
}

/** Follows a session or a turn (`<session>/turn-N`) until it closes or Ctrl-C. */
export async function follow(client: Client, id: string, o: FollowPrint): Promise<void> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const [{ watchSession, watchTurn }, { liveLine }, { StreamPrinter }] = await Promise.all([
    import('../../client/watch/live'),
    import('../../client/watch/live-lines'),
    import('../stream-print'),
  ]);
  const color = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR && process.env.TERM !== 'dumb';
  const notes = new WaitNotes();
  // Model text as it streams (from the workers' database), then each call's line.
  const streams = o.json || !o.home ? undefined : new StreamPrinter(o.home, (text) => writeOut(text));
  const watch: WatchOptions = {
    signal: stop.signal,
    onChange: (c: SpanChange) => {
      if (o.json) return printJsonLines([{ change: c.change, span: c.span }]);
      streams?.onChange(c);
      const line = liveLine(c, { escape: escapeForTerminal, color, turns: true });
      if (line !== undefined) print(line);
    },
    onTrouble: (t) => notes.trouble(t),
    ...(o.known ? { known: o.known } : {}),
    ...(o.fromNow ? { fromNow: true } : {}),
  };
  if (!o.json) say(`following ${id}; Ctrl-C stops`);
  try {
    const found = isAnyTurnId(id) ? await watchTurn(client, id, watch) : await watchSession(client, id, watch);
    if (!found) throw new UserError(`no session or turn ${id} in Temporal`, 'list sessions with `harness sessions`');
    if (!o.json) say(`${id} has closed`);
  } catch (err) {
    if (!stop.signal.aborted) throw err;
  } finally {
    streams?.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** Whether a row passes a `--state` filter. */
export function stateMatches(state: SessionRowState, filter: string | undefined): boolean {
  if (!filter) return true;
  if (filter === 'waiting') return state.startsWith('waiting_');
  if (filter === 'closed') return !['idle', 'running'].includes(state) && !state.startsWith('waiting_');
  return state === filter;
}

/**
 * `harness sessions`: each session's own state, turns, tokens, last task and age. History alone
 * tells it (no worker); a Temporal that is down or restarting is waited out like `run` does.
 */
export async function sessionsList(ctx: CliContext, o: { limit: number; json?: boolean; state?: string; waitTimeout: number }): Promise<void> {
  const client = await ctx.client({ waits: true });
  const troubleWait = commandTroubleWait(ctx, new WaitNotes(), o.waitTimeout * 1000, 'for the session list', '', 'try again with `harness sessions`');
  // Filtering happens after reading: read more so a filter still fills the list.
  const limit = o.state ? Math.min(1000, o.limit * 5) : o.limit;
  const rows = (await readUntil(client, () => listSessions(client, { limit }), troubleWait)).filter((r) => stateMatches(r.state, o.state)).slice(0, o.limit);
  if (o.json) return printJson(rows);
  if (!rows.length) return say(o.state ? `no ${o.state} sessions` : 'no sessions yet; start one with `harness run "<task>"`');
  for (const r of rows) print(rowLine(r));
}

/** One session for a person: id, state (with the step or what it waits for), turns, tokens, age, last task. */
export function rowLine(r: SessionRow, now = Date.now()): string {
  const state = r.sleeping ? `sleeping until ${r.sleeping.until}` : r.state === 'running' && r.step ? `running step ${r.step}` : r.state.replace(/_/g, ' ');
  const outcome = r.state === 'idle' && r.last_outcome && r.last_outcome !== 'final_answer' && r.last_outcome !== 'finish' ? ` (last turn: ${r.last_outcome})` : '';
  // The task is a person's text, shown on its line (the writer escapes the rest; tabs stay columns).
  const task = r.last_task ? escapeForTerminal(oneLine(r.last_task, 60)) : '';
  return `${r.session_id}\t${state}${outcome}\t${r.turns} turn(s)\t${r.usage.total_tokens} tokens\t${age(now - Date.parse(r.last_activity_at))}\t${task}${r.schedule ? `\t(schedule ${r.schedule})` : ''}`;
}

/** `3 s ago`, `5 min ago`, `2 h ago`, `4 d ago`. */
export function age(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86_400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86_400)} d ago`;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
