/**
 * `--full`: what history names by hash, read back from the message store the worker writes to
 * (DATABASE_URL, else the embedded PGlite under HARNESS_HOME): the messages each model request
 * added, the system message, replies whole, large arguments and results, and the call records a
 * long turn keeps in chunks (client/store-reader.ts opens the store; a store that cannot be opened
 * is one line of explanation, and the trace then shows what history holds).
 */
import type { MessageStore, StoredNode } from '../../activities/store/message-store';
import { isBlobArg, type PendingMessage } from '../../deterministic/conversation';
import type { ToolCallRecord } from '../../deterministic/call-records';
import type { ChatMessage } from '../../deterministic/types';
import { MAX_PAYLOAD_DEPTH, parseBounded } from './bounded';
import { parseArgs } from './call-spans';
import type { Timeline } from './timeline';
import type { BuiltSpan } from './types';

/** An open store, or why there is none. */
export type OpenedStore = { store: MessageStore; close(): Promise<void> } | { problem: string };

/** Reads the payloads of one session, remembering chain nodes so each chain is read once. */
export class SessionPayloads {
  private readonly nodes = new Map<string, StoredNode>();
  readonly missing = new Set<string>();

  constructor(
    private readonly store: MessageStore,
    readonly sessionId: string,
  ) {}

  async texts(hashes: readonly string[]): Promise<Map<string, string>> {
    const wanted = [...new Set(hashes)];
    if (!wanted.length) return new Map();
    const got = await this.store.getBlobs(this.sessionId, wanted);
    for (const h of wanted) if (!got.has(h)) this.missing.add(h);
    return got;
  }

  /** The whole conversation the chain `head` names, oldest message first. */
  async conversation(head: string): Promise<ChatMessage[]> {
    if (!this.nodes.has(head)) {
      for (const n of await this.store.readChain(this.sessionId, head)) this.nodes.set(n.hash, n);
    }
    const chain: StoredNode[] = [];
    for (let h: string | null = head; h !== null; h = this.nodes.get(h)?.parent ?? null) {
      const n = this.nodes.get(h);
      if (!n) break;
      chain.push(n);
    }
    chain.reverse();
    const bodies = await this.texts(chain.map((n) => n.blob));
    return chain.map((n) => (bodies.has(n.blob) ? (parseStored(bodies.get(n.blob)!) as ChatMessage) : ({ missing: n.blob } as unknown as ChatMessage)));
  }

  /** The message at the end of the chain `head` (a model call's reply). */
  async messageAt(head: string): Promise<ChatMessage | undefined> {
    if (!this.nodes.has(head)) {
      try {
        for (const n of await this.store.readChain(this.sessionId, head)) this.nodes.set(n.hash, n);
      } catch {
        this.missing.add(head);
        return undefined;
      }
    }
    const node = this.nodes.get(head);
    const body = node ? (await this.texts([node.blob])).get(node.blob) : undefined;
    return body === undefined ? undefined : (parseStored(body) as ChatMessage);
  }
}

/** Adds the call records a long turn stored in chunks (those history does not name inline). */
export async function addStoredRecords(t: Timeline, p: SessionPayloads): Promise<void> {
  if (!t.storedRecords.length) return;
  const got = await p.texts(t.storedRecords);
  for (const h of t.storedRecords) {
    const text = got.get(h);
    if (text === undefined) continue;
    for (const r of parseStored(text) as ToolCallRecord[]) if (!t.records.has(r.callId)) t.records.set(r.callId, r);
  }
}

/**
 * Fills in the payloads of a turn's spans (values missing from the store are counted in
 * `p.missing`). `wholeInput`: each model call also gets `context`, the whole conversation it
 * was sent (system message, the stored chain, the new messages), as an OTLP export shows it.
 */
export async function addPayloads(spans: readonly BuiltSpan[], p: SessionPayloads, opts: { wholeInput?: boolean } = {}): Promise<void> {
  // Latest replies first: their chain holds the earlier ones, so one read serves the turn.
  const llms = spans.filter((s) => s.refs?.kind === 'llm_call');
  for (const s of [...llms].reverse()) await replyPayload(p, s);
  let system: string | undefined;
  let systemText: string | undefined;
  let notes: string | undefined;
  let notesText: string | undefined;
  for (const s of llms) {
    system = await requestPayload(p, s, system);
    if (typeof s.span.input.system === 'string') systemText = s.span.input.system;
    notes = await notesPayload(p, s, notes);
    if (typeof s.span.input.notes === 'string') notesText = s.span.input.notes;
    const refs = s.refs as Extract<BuiltSpan['refs'], { kind: 'llm_call' }>;
    if (opts.wholeInput) await wholeInput(p, s, systemText, refs.notes ? notesText : undefined);
  }
  for (const s of spans) if (s.refs?.kind === 'tool_call') await toolPayload(p, s);
}

/** The messages a model request added, and the system message when it changed. */
async function requestPayload(p: SessionPayloads, s: BuiltSpan, previousSystem: string | undefined): Promise<string | undefined> {
  const refs = s.refs as Extract<BuiltSpan['refs'], { kind: 'llm_call' }>;
  const pending: PendingMessage[] = refs.pending ?? [];
  const stored = await p.texts(pending.flatMap((m) => ('ref' in m ? [m.ref] : [])));
  const messages = refs.inline ?? pending.map((m) => ('message' in m ? m.message : stored.has(m.ref) ? (parseStored(stored.get(m.ref)!) as ChatMessage) : { missing: m.ref }));
  s.span.input.messages = messages;
  const hash = refs.system?.hash;
  if (hash && hash !== previousSystem) {
    const text = refs.system?.text ?? (await p.texts([hash])).get(hash);
    if (text !== undefined) s.span.input.system = text;
  }
  return hash ?? previousSystem;
}

/** The memory a request sent after its conversation, when it differs from the request's before (as the system message). */
async function notesPayload(p: SessionPayloads, s: BuiltSpan, previous: string | undefined): Promise<string | undefined> {
  const refs = s.refs as Extract<BuiltSpan['refs'], { kind: 'llm_call' }>;
  const hash = refs.notes?.hash;
  if (hash && hash !== previous) {
    const text = refs.notes?.text ?? (await p.texts([hash])).get(hash);
    if (text !== undefined) s.span.input.notes = text;
  }
  return hash ?? previous;
}

/** The request as the model got it: the system message, the conversation so far, the new messages, the memory after them. */
async function wholeInput(p: SessionPayloads, s: BuiltSpan, system: string | undefined, notes?: string): Promise<void> {
  const head = s.span.input.conversation_head;
  const before = typeof head === 'string' ? await p.conversation(head).catch(() => undefined) : [];
  if (!before) return;
  const added = (s.span.input.messages as ChatMessage[] | undefined) ?? [];
  const after = notes !== undefined ? [{ role: 'system', content: notes }] : [];
  s.span.input.context = [...(system !== undefined ? [{ role: 'system', content: system }] : []), ...before.filter((m) => m.role !== 'system'), ...added, ...after];
}

/** The reply whole: its text (history keeps a preview beside tool calls) and the calls' arguments as the model wrote them. */
async function replyPayload(p: SessionPayloads, s: BuiltSpan): Promise<void> {
  const refs = s.refs as Extract<BuiltSpan['refs'], { kind: 'llm_call' }>;
  if (!refs.replyHead || !s.span.output) return;
  const m = await p.messageAt(refs.replyHead);
  if (m?.role !== 'assistant') return;
  s.span.output.content = m.content;
  if (m.tool_calls) s.span.output.tool_calls = m.tool_calls.map((c) => ({ id: c.id, name: c.name, arguments: parseArgs(c.arguments) }));
}

/** Whole arguments (stored payloads read back) and the whole result of a large one. */
async function toolPayload(p: SessionPayloads, s: BuiltSpan): Promise<void> {
  const refs = s.refs as Extract<BuiltSpan['refs'], { kind: 'tool_call' }>;
  const args = refs.args;
  if (args && typeof args === 'object' && !Array.isArray(args)) {
    const blobs = Object.values(args as Record<string, unknown>).filter(isBlobArg);
    if (blobs.length) {
      const got = await p.texts(blobs.map((b) => b.$blob));
      s.span.input.args = Object.fromEntries(Object.entries(args as Record<string, unknown>).map(([k, v]) => [k, isBlobArg(v) ? (got.get(v.$blob) ?? v) : v]));
    }
  }
  if (refs.resultRef && s.span.output) {
    const body = (await p.texts([refs.resultRef])).get(refs.resultRef);
    if (body !== undefined) {
      const message = parseStored(body) as { content?: string };
      const whole = typeof message.content === 'string' ? parseArgs(message.content, MAX_PAYLOAD_DEPTH) : undefined;
      if (whole && typeof whole === 'object') Object.assign(s.span.output, whole);
    }
  }
}

/** A stored value (the worker wrote it as JSON), no deeper than a history payload is read. */
function parseStored(text: string): unknown {
  return parseBounded(text, MAX_PAYLOAD_DEPTH);
}
