/**
 * One tool call of a session, every argument whole: for `harness show` and the console's
 * expander. Read from the turn's history (no worker needed), the arguments as the turn validated
 * them when it asked a person (else as the model wrote them), each value history keeps only by
 * reference (a long `content` or `body`) read back from the message store.
 */
import type { Client } from '@temporalio/client';
import { isBlobArg } from '../deterministic/conversation';
import { loadTrace, type Span } from '../history/trace';
import type { OpenedStore } from '../history/trace/payloads';
import { UserError } from '../machine/errors';
import { formatTurnId } from '../deterministic/turn-id';

/** A call as `harness show` prints it. */
export interface CallDetail {
  sessionId: string;
  turnId: string;
  callId: string;
  tool: string;
  /** Waiting for a person now. */
  pending: boolean;
  /** Where it stands, in words: `waiting for approval`, `approved by …`, `denied by …: why`, `ran: ok` … */
  state: string;
  /** The digest of tool and arguments a decision names (calls that asked a person). */
  digest?: string;
  risk?: string;
  rule?: string;
  reason?: string;
  /** Every argument, whole (a stored one that could not be read stays a `{$blob, bytes, preview}` reference). */
  args: unknown;
  /** Why some argument is not whole, when one is not. */
  problem?: string;
}

const CALL_ID = /^t([1-9]\d*)-s\d+-c\d+$/;

/** The call `callId` of the session, or a one-line error when the session has no such call. */
export async function callDetail(client: Client, sessionId: string, callId: string, store: () => Promise<OpenedStore>): Promise<CallDetail> {
  const turn = CALL_ID.exec(callId)?.[1];
  if (!turn) throw new UserError(`${callId} is not a call id`, `call ids look like t1-s2-c0: see \`harness status ${sessionId}\` or \`harness trace ${sessionId}\``);
  const turnId = formatTurnId(sessionId, Number(turn));
  const notFound = () => new UserError(`session ${sessionId} has no call ${callId}`, `see its calls with \`harness trace ${sessionId}\``);
  let spans: Span[];
  try {
    spans = (await loadTrace(client, turnId)).spans.map((s) => s.span);
  } catch (err) {
    if (err instanceof UserError && /no session or turn/.test(err.message)) throw notFound();
    throw err;
  }
  const call = spans.find((s) => s.type === 'tool_call' && s.input.call_id === callId);
  if (!call) throw notFound();
  const approval = spans.find((s) => s.type === 'approval' && s.input.call_id === callId);
  const asked = approval?.input ?? {};
  const viewArgs = asked.args !== undefined ? asked.args : call.input.args;
  const whole = await wholeArgs(sessionId, viewArgs, store);
  return {
    sessionId,
    turnId,
    callId,
    tool: call.name,
    pending: approval?.status === 'running',
    state: stateOf(call, approval),
    ...(typeof asked.digest === 'string' ? { digest: asked.digest } : {}),
    ...(typeof asked.risk === 'string' ? { risk: asked.risk } : typeof call.input.risk === 'string' ? { risk: call.input.risk } : {}),
    ...(typeof asked.rule === 'string' ? { rule: asked.rule } : {}),
    ...(typeof asked.reason === 'string' ? { reason: asked.reason } : {}),
    args: whole.args,
    ...(whole.problem ? { problem: whole.problem } : {}),
  };
}

/** The arguments with every stored value read back; the store is opened only when one is stored. */
async function wholeArgs(sessionId: string, args: unknown, store: () => Promise<OpenedStore>): Promise<{ args: unknown; problem?: string }> {
  if (!args || typeof args !== 'object' || Array.isArray(args)) return { args };
  const refs = Object.values(args as Record<string, unknown>).filter(isBlobArg);
  if (!refs.length) return { args };
  const opened = await store();
  if ('problem' in opened) return { args, problem: `the message store cannot be read (${opened.problem}): stored values are shown by their first characters` };
  try {
    const got = await opened.store.getBlobs(sessionId, refs.map((r) => r.$blob));
    const out = Object.fromEntries(Object.entries(args as Record<string, unknown>).map(([k, v]) => [k, isBlobArg(v) && got.has(v.$blob) ? got.get(v.$blob) : v]));
    const lost = refs.filter((r) => !got.has(r.$blob)).length;
    return { args: out, ...(lost ? { problem: `${lost} stored value(s) are missing from the message store (purged?)` } : {}) };
  } finally {
    await opened.close();
  }
}

/** Where the call stands, from its spans. */
function stateOf(call: Span, approval: Span | undefined): string {
  const out = (approval?.output ?? {}) as { approved?: boolean; by?: string; at?: string; reason?: string; always?: boolean; timed_out?: boolean };
  const by = `${out.by ? ` by ${out.by}` : ''}${out.at ? ` at ${out.at}` : ''}`;
  const ran = call.status === 'ok' ? '; ran: ok' : call.status === 'error' && call.error ? `; ${call.error}` : '';
  if (approval?.status === 'running') return 'waiting for approval';
  if (out.timed_out) return 'approval timed out: nobody decided in time';
  if (out.approved === true) return `approved${out.always ? ' (always)' : ''}${by}${ran}`;
  if (out.approved === false) return `denied${by}${out.reason ? `: ${out.reason}` : ''}`;
  if (call.status === 'running') return 'running';
  return call.status === 'ok' ? 'ran: ok' : `failed: ${call.error ?? 'no result in history'}`;
}
