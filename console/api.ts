/**
 * What the console's page asks for, as JSON: the sessions with their own state, a session's
 * trace (spans; `full` adds the payloads read from the message store), the approval inbox across
 * all sessions, and the decisions taken in the page (approve, approve always, deny with a reason,
 * answer), each through the public client, so a decision is the same update `harness approve`
 * sends, under the console's identity.
 */
import type { HarnessClient } from '../api/client';
import type { PendingApproval } from '../common/session';
import { alwaysRuleFor, describeGrant } from '../common/policy/always';
import type { PolicyCall } from '../common/policy/match';
import type { Policy } from '../common/policy/schema';
import { listSessions, type SessionRow } from '../client/session-list';
import { openMessageStore } from '../client/store-reader';
import { UserError } from '../host/errors';

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

/** A pending call in the inbox, with what approving it always would grant. */
export interface InboxItem {
  session_id: string;
  turn_id?: string;
  kind: 'approval' | 'question' | 'budget';
  call?: PendingApproval & { always_grants: string };
  question?: string;
  call_id?: string;
  since: string;
}

/** The sessions, newest first. */
export async function sessions(d: ApiDeps, limit = 50): Promise<SessionRow[]> {
  return listSessions(d.harness.temporal, { limit, taskQueue: d.taskQueue });
}

/** Everything waiting for a person, across all sessions. */
export async function inbox(d: ApiDeps): Promise<InboxItem[]> {
  const rows = (await sessions(d, 200)).filter((r) => r.pending);
  const items: InboxItem[] = [];
  for (const r of rows) {
    const p = r.pending!;
    const base = { session_id: r.session_id, ...(r.current_turn ? { turn_id: r.current_turn } : {}), since: r.last_activity_at };
    if (p.kind === 'approvals') for (const c of p.calls) items.push({ ...base, kind: 'approval', call: { ...c, always_grants: grantPreview(c) } });
    else if (p.kind === 'question') items.push({ ...base, kind: 'question', question: p.question, call_id: p.callId });
    else items.push({ ...base, kind: 'budget' });
  }
  return items;
}

/** What `approve always` would grant for this call (sessions of today's policy version). */
export function grantPreview(c: PendingApproval): string {
  const call: PolicyCall = { tool: c.tool, risk: c.risk, args: (c.args ?? {}) as Record<string, unknown> };
  return describeGrant(alwaysRuleFor(call, { version: 3 } as Policy));
}

/** A session's or turn's trace; `full` adds the payloads from the message store. */
export async function trace(d: ApiDeps, id: string, full: boolean): Promise<unknown> {
  const store = full ? await openMessageStore(d.home, d.env) : undefined;
  try {
    const t = await d.harness.trace(id, store ? { store } : {});
    return { ...t, spans: t.spans.map((s) => s.span), links: links(d, t.sessionId, t.spans.map((s) => s.span).filter((s) => s.type === 'turn').map((s) => s.name)) };
  } finally {
    if (store && 'close' in store) await store.close();
  }
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
