/**
 * What the console's page asks for, as JSON: the sessions with their own state, a session's
 * trace (spans; `full` adds the payloads read from the message store), the approval inbox across
 * all sessions, one call's every argument whole, and the decisions taken in the page (approve,
 * approve always, deny with a reason, answer), each through the public client, so a decision is
 * the same update `harness approve` sends, under the console's identity.
 *
 * Everything the page draws leaves here as display text, escaped by the CLI's own function
 * (machine/terminal/escape.ts): bidi controls, zero-width and other invisible characters arrive as
 * `\u202e`, `\u200b` …, so the page shows what the terminal shows, by one rule. The page acts
 * only on `ref`: the raw ids it puts in addresses and decisions, never drawn.
 */
import type { HarnessClient } from '../api/client';
import type { PendingApproval } from '../deterministic/session';
import { alwaysRuleFor, describeGrant } from '../deterministic/policy/always';
import type { PolicyCall } from '../deterministic/policy/match';
import type { Policy } from '../deterministic/policy/schema';
import { listSessions, type SessionRow } from '../client/session-list';
import { openMessageStore } from '../client/store-reader';
import { callView, INLINE_MAX, showCommand, type CallView } from '../client/call-view';
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
  /** The Temporal Web UI's base URL, when there is one to link to. */
  temporalUi?: string;
  namespace: string;
}

/** A pending call in the inbox, with every argument as the views show it and what approving it always would grant. */
export interface InboxItem {
  session_id: string;
  turn_id?: string;
  kind: 'approval' | 'question' | 'budget';
  call?: PendingApproval & { always_grants: string; view: CallView; show: string };
  question?: string;
  call_id?: string;
  since: string;
  /** What the page puts in addresses and decisions (raw): never drawn. */
  ref: { session_id: string; call_id?: string; digest?: string };
}

/** The sessions, newest first, as display text; `ref.session_id` for links. */
export async function sessions(d: ApiDeps, limit = 50): Promise<(SessionRow & { ref: { session_id: string } })[]> {
  const rows = await listSessions(d.harness.temporal, { limit, taskQueue: d.taskQueue });
  return rows.map((r) => ({ ...displayed(r), ref: { session_id: r.session_id } }));
}

/** Everything waiting for a person, across all sessions, as display text. */
export async function inbox(d: ApiDeps): Promise<InboxItem[]> {
  const rows = (await listSessions(d.harness.temporal, { limit: 200, taskQueue: d.taskQueue })).filter((r) => r.pending);
  const items: InboxItem[] = [];
  for (const r of rows) {
    const p = r.pending!;
    const base = { session_id: r.session_id, ...(r.current_turn ? { turn_id: r.current_turn } : {}), since: r.last_activity_at };
    const ref = { session_id: r.session_id };
    if (p.kind === 'approvals') {
      for (const c of p.calls) {
        // The view is built from the raw arguments (it escapes each); the rest is escaped whole.
        const call = { ...displayed(c), always_grants: displayed(grantPreview(c)), view: callView(c.args), show: displayed(showCommand(r.session_id, c.callId)) };
        items.push({ ...displayed(base), kind: 'approval', call, ref: { ...ref, call_id: c.callId, ...(c.digest !== undefined ? { digest: c.digest } : {}) } });
      }
    } else if (p.kind === 'question') items.push({ ...displayed(base), kind: 'question', question: displayed(p.question), call_id: displayed(p.callId), ref });
    else items.push({ ...displayed(base), kind: 'budget', ref });
  }
  return items;
}

/** What `approve always` would grant for this call (sessions of today's policy version). */
export function grantPreview(c: PendingApproval): string {
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
 * call's session and id fetch its every argument).
 */
export function displaySpan(s: Span): Record<string, unknown> {
  const args = (s.type === 'approval' || s.type === 'tool_call') && s.input.args !== undefined ? { view: callView(s.input.args) } : {};
  const callId = typeof s.input.call_id === 'string' ? { call_id: s.input.call_id } : {};
  return { ...displayed(s), ...args, ref: { name: s.name, session_id: s.session_id, ...callId } };
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
