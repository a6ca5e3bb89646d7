/**
 * What the console's page asks for, as JSON: the sessions with their own state (of every task
 * queue, or of the configured ones) and what each cost, a session's trace (spans; `full` adds the
 * payloads read from the message store) and its cost by turn, the approval inbox across all
 * sessions, one call's every argument whole, and the decisions taken in the page (approve,
 * approve always, deny with a reason, answer), each through the public client, so a decision is
 * the same update `harness approve` sends, under the console's identity. A decision goes to the
 * session's workflow id, whichever task queue its worker polls.
 *
 * Everything the page draws leaves here as display text, escaped by the CLI's own function
 * (machine/terminal/escape.ts): bidi controls, zero-width and other invisible characters arrive as
 * `\u202e`, `\u200b` …, so the page shows what the terminal shows, by one rule. The page acts
 * only on `ref`: the raw ids it puts in addresses and decisions, never drawn.
 */
import type { HarnessClient } from '../api/client';
import type { PendingApproval } from '../deterministic/session-state';
import { alwaysRuleFor, describeGrant } from '../deterministic/policy/always';
import type { PolicyCall } from '../deterministic/policy/match';
import type { Policy } from '../deterministic/policy/schema';
import { listSessions, type SessionRow } from '../client/session-list';
import { openMessageStore } from '../client/store-reader';
import { callView, CLIPPED_CHARS, INLINE_MAX, showCommand, type ArgView, type CallView } from '../machine/call-view';
import { isBlobArg } from '../deterministic/conversation';
import { loadLedger } from '../history/ledger/load';
import { moneyText, tallyText } from '../history/ledger/render';
import type { Ledger } from '../history/ledger/types';
import type { Tally } from '../deterministic/ledger';
import { callDetail } from '../client/call-detail';
import type { Span } from '../history/trace/types';
import { UserError } from '../machine/errors';
import { escapeForTerminal, escapeJsonForTerminal } from '../machine/terminal/escape';

/** What the API needs. */
export interface ApiDeps {
  harness: HarnessClient;
  home: string;
  env: NodeJS.ProcessEnv;
  taskQueue: string;
  /**
   * The task queues whose sessions are listed (and inboxed); absent: HARNESS_CONSOLE_QUEUES
   * (comma-separated) when set, else every queue, so an app's sessions on its own queue show too.
   */
  queues?: readonly string[];
  /** The Temporal Web UI's base URL, when there is one to link to. */
  temporalUi?: string;
  namespace: string;
}

/** A pending call in the inbox, with every argument as the views show it and what approving it always would grant. */
interface InboxItem {
  session_id: string;
  turn_id?: string;
  /** A sub-agent's wait: the agents from the session's down to it (`lead › researcher`). */
  agent_path?: string;
  kind: 'approval' | 'question' | 'budget';
  call?: PendingApproval & { always_grants: string; view: ConsoleCallView; show: string };
  question?: string;
  call_id?: string;
  since: string;
  /** What the page puts in addresses and decisions (raw): never drawn. */
  ref: { session_id: string; call_id?: string; digest?: string };
}

/** The task queues the console lists sessions of; empty: every queue. */
export function consoleQueues(d: Pick<ApiDeps, 'queues' | 'env'>): readonly string[] {
  return d.queues ?? (d.env.HARNESS_CONSOLE_QUEUES ?? '').split(',').map((q) => q.trim()).filter(Boolean);
}

/** What a session cost so far, as its list row shows it: the ledger's tokens and money (`harness cost`'s figures). */
interface RowCost {
  total_tokens: number;
  /** `12,345`. */
  tokens: string;
  /** `$0.0123`, `$0.0000` (free) or `no price`. */
  money: string;
}

/** The sessions, newest first, as display text, each with what it cost; `ref.session_id` for links. */
export async function sessions(d: ApiDeps, limit = 50): Promise<(SessionRow & { cost?: RowCost; ref: { session_id: string } })[]> {
  const rows = await listSessions(d.harness.temporal, { limit, taskQueue: consoleQueues(d) });
  const costs = await rowCosts(d, rows);
  return rows.map((r, i) => ({ ...displayed(r), ...(costs[i] ? { cost: costs[i] } : {}), ref: { session_id: r.session_id } }));
}

// A session's ledger is read again only when its row says something happened since (a closed
// turn's tally never changes; a waiting session's none until it goes on).
const rowCostCache = new Map<string, { key: string; cost: Promise<RowCost | undefined> }>();
/** Sessions whose ledgers are read at once. */
const LEDGERS_AT_ONCE = 4;

async function rowCosts(d: ApiDeps, rows: SessionRow[]): Promise<(RowCost | undefined)[]> {
  const out: (RowCost | undefined)[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i += LEDGERS_AT_ONCE) {
    const some = rows.slice(i, i + LEDGERS_AT_ONCE).map((r) => {
      const key = `${r.state}|${r.turns}|${r.step ?? ''}|${r.last_activity_at}`;
      let hit = rowCostCache.get(r.session_id);
      if (!hit || hit.key !== key) {
        hit = { key, cost: ledgerOf(d, r.session_id).then((l) => tallyCost(l.total), () => undefined) };
        rowCostCache.set(r.session_id, hit);
      }
      return hit.cost;
    });
    out.splice(i, some.length, ...(await Promise.all(some)));
  }
  // The cache holds the sessions listed last, no more.
  const listed = new Set(rows.map((r) => r.session_id));
  for (const id of rowCostCache.keys()) if (!listed.has(id)) rowCostCache.delete(id);
  return out;
}

/** The ledger `harness cost` reads: sessions from before prices priced with the current table, as it prices them. */
async function ledgerOf(d: ApiDeps, id: string): Promise<Ledger> {
  const { currentPricing } = await import('../config/session-prices');
  return loadLedger(d.harness.temporal, id, { fallback: currentPricing(d.env, process.cwd()) });
}

/** `12,345` (as `harness cost` writes a count). */
const count = (x: number) => String(Math.round(x)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

function tallyCost(t: Tally): RowCost {
  return { total_tokens: t.total_tokens, tokens: count(t.total_tokens), money: moneyText(t) };
}

/**
 * What a session (every turn) or a turn cost so far, from the ledger `harness cost` reads (a
 * running turn's calls read from its events): the total as `harness cost`'s first line ends
 * (`$0.0123 · 12,345 tokens`), and each turn as its `by turn` line (`running · 2 calls · …`).
 */
export async function cost(d: ApiDeps, id: string): Promise<unknown> {
  if (!id) throw new UserError('id is required', 'give a session id or a turn id');
  const l = await ledgerOf(d, id);
  return displayed({
    id: l.id,
    kind: l.kind,
    priced: l.priced,
    total: { ...tallyCost(l.total), text: `${moneyText(l.total)} · ${count(l.total.total_tokens)} tokens`, tally: tallyText(l.total) },
    turns: l.turns.map((t) => ({ turn_id: t.turnId, turn: t.turn, text: `${t.terminated_by ?? 'running'} · ${tallyText(t.total)}`, ...tallyCost(t.total) })),
    notes: l.notes,
  });
}

/** An argument as the console shows it: the views' one line, and a string of several lines also as those lines (escaped by the same rule, newlines and tabs kept). */
type ConsoleArgView = ArgView & { lines?: string };
/** A call's arguments as the console shows them. */
type ConsoleCallView = Omit<CallView, 'args'> & { args: ConsoleArgView[] };

/**
 * The call's view (machine/call-view.ts: every argument, none left out), with each string that
 * holds a newline (a file's content; never a command) also as its lines, so the page can show them as text in a
 * `pre` rather than one JSON line of `\n`s; a long one its first lines, as the view cuts it.
 */
function consoleCallView(args: unknown): ConsoleCallView {
  const view = callView(args);
  if (!args || typeof args !== 'object' || Array.isArray(args)) return view;
  // The view's arguments, in its order: every one but a command shown as the headline.
  const values = Object.entries(args as Record<string, unknown>).filter(([k]) => view.headline === undefined || k !== 'command');
  // A command stays one line, `\n` and all, as every view shows it: what runs is read in one piece.
  return { ...view, args: view.args.map((a, i) => (values[i]?.[0] === 'command' ? a : withLines(a, values[i]?.[1]))) };
}

const KEEP_LINES = { keepNewlines: true, keepTabs: true };

function withLines(a: ArgView, value: unknown): ConsoleArgView {
  const text = typeof value === 'string' ? value : isBlobArg(value) && typeof value.preview === 'string' ? value.preview : undefined;
  if (text === undefined || !text.includes('\n')) return a;
  if (!a.clipped) return { ...a, lines: escapeForTerminal(text, KEEP_LINES) };
  // Cut by code points where the view cuts, so no character is split in two.
  const head = Array.from(text).slice(0, CLIPPED_CHARS).join('');
  return { ...a, lines: `${escapeForTerminal(head, KEEP_LINES)}…` };
}

/** Everything waiting for a person, across all sessions, as display text. */
export async function inbox(d: ApiDeps): Promise<InboxItem[]> {
  // Each row's wait is as the turn that waits says it (listSessions reads the turn's own record).
  const rows = (await listSessions(d.harness.temporal, { limit: 200, taskQueue: consoleQueues(d) })).filter((r) => r.pending);
  const items: InboxItem[] = [];
  for (const r of rows) {
    const p = r.pending!;
    const base = { session_id: r.session_id, ...(r.current_turn ? { turn_id: r.current_turn } : {}), ...(p.agent ? { agent_path: p.agent.path.join(' › ') } : {}), since: r.last_activity_at };
    const ref = { session_id: r.session_id };
    if (p.kind === 'approvals') {
      for (const c of p.calls) {
        // The view is built from the raw arguments (it escapes each); the rest is escaped whole.
        const call = { ...displayed(c), always_grants: displayed(grantPreview(c)), view: consoleCallView(c.args), show: displayed(showCommand(r.session_id, c.callId)) };
        items.push({ ...displayed(base), kind: 'approval', call, ref: { ...ref, call_id: c.callId, ...(c.digest !== undefined ? { digest: c.digest } : {}) } });
      }
    } else if (p.kind === 'question') items.push({ ...displayed(base), kind: 'question', question: displayed(p.question), call_id: displayed(p.callId), ref });
    else items.push({ ...displayed(base), kind: 'budget', ref });
  }
  return items;
}

/** What `approve always` would grant for this call (sessions of today's policy version). */
function grantPreview(c: PendingApproval): string {
  const call: PolicyCall = { tool: c.tool, risk: c.risk, args: (c.args ?? {}) as Record<string, unknown> };
  return describeGrant(alwaysRuleFor(call, { version: 3 } as Policy));
}

/** A session's or turn's trace, each span as display text; `full` adds the payloads from the message store (as escaped JSON text, `payload`). */
export async function trace(d: ApiDeps, id: string, full: boolean): Promise<unknown> {
  const store = full ? await openMessageStore(d.home, d.env) : undefined;
  try {
    const t = await d.harness.trace(id, store ? { store } : {});
    const spans = t.spans.map((s) => s.span);
    return {
      ...displayed({ ...t, spans: [] }),
      spans: spans.map((s) => ({ ...displaySpan(s), ...(full ? { payload: escapeJsonForTerminal(JSON.stringify({ input: s.input, output: s.output, error: s.error }, null, 2)) } : {}) })),
      links: links(d, t.sessionId, spans.filter((s) => s.type === 'turn').map((s) => s.name)),
    };
  } finally {
    if (store && 'close' in store) await store.close();
  }
}

/**
 * A span as the page draws it: every string escaped, a call's arguments as the approval views
 * show them (`view`), the raw ids in `ref` (a turn's name is the id its trace is fetched by; a
 * call's session and id fetch its every argument). An approval still waiting carries what the
 * inbox's card does: what approving it always would grant, and in `ref` the digest of the tool
 * and arguments shown, which a decision from the session view names as the inbox's does.
 */
export function displaySpan(s: Span): Record<string, unknown> {
  const args = (s.type === 'approval' || s.type === 'tool_call') && s.input.args !== undefined ? { view: consoleCallView(s.input.args) } : {};
  const callId = typeof s.input.call_id === 'string' ? { call_id: s.input.call_id } : {};
  const waiting = s.type === 'approval' && s.status === 'running' && typeof s.input.digest === 'string' && typeof s.input.tool === 'string';
  const digest = waiting ? { digest: s.input.digest as string } : {};
  const grants = waiting
    ? { always_grants: displayed(grantPreview({ callId: String(s.input.call_id), tool: s.input.tool as string, risk: s.input.risk as PendingApproval['risk'], args: s.input.args, reason: '' } as PendingApproval)) }
    : {};
  return { ...displayed(s), ...args, ...grants, ref: { name: s.name, session_id: s.session_id, ...callId, ...digest } };
}

/**
 * One call of a session, every argument whole (for the page's expander), as display text: each
 * value escaped like `harness show` prints it, newlines and tabs kept (the page shows it in a
 * `pre`), with its size.
 */
export async function call(d: ApiDeps, sessionId: string, callId: string): Promise<unknown> {
  const c = await callDetail(d.harness.temporal, sessionId, callId, () => openMessageStore(d.home, d.env));
  const entries = c.args && typeof c.args === 'object' && !Array.isArray(c.args) ? Object.entries(c.args as Record<string, unknown>) : [['(arguments)', c.args] as const];
  const args = entries.map(([name, value]) => {
    const text = typeof value === 'string' ? value : (JSON.stringify(value, null, 2) ?? String(value));
    const long = text.length > INLINE_MAX || text.includes('\n');
    return {
      name: escapeForTerminal(name),
      text: escapeForTerminal(typeof value === 'string' && !long ? JSON.stringify(value) : text, { keepNewlines: true, keepTabs: true }),
      size: typeof value === 'string' ? `${Array.from(value).length} characters, ${Buffer.byteLength(value, 'utf8')} bytes` : `${text.length} characters of JSON`,
    };
  });
  const { args: _raw, ...rest } = c;
  return { ...displayed(rest), args };
}

/** Every string in the value (keys too) escaped for display; the value's shape kept. */
export function displayed<T>(value: T): T {
  if (typeof value === 'string') return escapeForTerminal(value) as T;
  if (Array.isArray(value)) return value.map((v) => displayed(v)) as T;
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [escapeForTerminal(k), displayed(v)])) as T;
  return value;
}

/** Links to the Temporal Web UI for the raw events of the session and its turns. */
function links(d: ApiDeps, sessionId: string, turnIds: string[]): Record<string, string> {
  if (!d.temporalUi) return {};
  const url = (id: string) => `${d.temporalUi}/namespaces/${encodeURIComponent(d.namespace)}/workflows/${encodeURIComponent(id)}`;
  return Object.fromEntries([sessionId, ...turnIds].map((id) => [id, url(id)]));
}

/** A decision posted by the page. */
export interface DecisionBody {
  call_id?: unknown;
  digest?: unknown;
  approve?: unknown;
  always?: unknown;
  reason?: unknown;
  text?: unknown;
}

/** Approves (always, or once) or denies one call, bound to the digest the page showed. */
export async function decide(d: ApiDeps, sessionId: string, b: DecisionBody): Promise<{ decided: string[]; granted: string[] }> {
  if (typeof b.call_id !== 'string' || typeof b.digest !== 'string') throw new UserError('call_id and digest are required', 'approve a call shown in the inbox');
  const approve = b.approve === true;
  const reason = typeof b.reason === 'string' ? b.reason.trim() : '';
  if (!approve && !reason) throw new UserError('a denial needs a reason', 'say why; the model reads it');
  const out = await d.harness.decide(sessionId, {
    calls: [{ callId: b.call_id, digest: b.digest }],
    approve,
    ...(approve && b.always === true ? { always: true } : {}),
    ...(!approve ? { reason: reason.slice(0, 2000) } : {}),
  });
  return { decided: out.calls.map((c) => c.callId), granted: out.granted };
}

/** Answers the session's pending question. */
export async function answer(d: ApiDeps, sessionId: string, b: DecisionBody): Promise<{ turn_id: string }> {
  if (typeof b.text !== 'string' || !b.text.trim()) throw new UserError('an answer needs text', 'type the answer');
  const { turnId } = await d.harness.answer(sessionId, b.text);
  return { turn_id: turnId };
}
