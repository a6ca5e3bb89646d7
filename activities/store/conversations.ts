/**
 * Conversations over the message store, for the activities: turn a reference (chain head plus
 * pending messages) into messages, chain new messages and return the new head, store large
 * values once. Hashes are SHA-256: a body's hash is of its text; a node's of its parent and its
 * body's hash, so a head names its whole history. A worker-side cache keeps recent
 * conversations, so a step costs the new messages, not the whole history, on the same worker.
 */
import { createHash } from 'node:crypto';
import type { ChatMessage } from '../../deterministic/types';
import type { PendingMessage } from '../../deterministic/conversation';
import { messageTokens } from '../../deterministic/context/estimate';

export { messageTokens };
import { StoreUnavailableError, type MessageStore, type StoredNode } from './message-store';

/** SHA-256 of a text, lower-case hex (the same as deterministic/digest.ts computes in workflow code). */
export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The hash of a chain node. */
export function nodeHash(parent: string | null, blob: string): string {
  return sha256(`${parent ?? ''}:${blob}`);
}

/** A conversation read for a call, its pending messages not yet written. */
export interface Draft extends Chained {
  added: Entry[];
  /** Texts the call sends (its system text, its notes) that the commit writes with the chain. */
  texts?: { hash: string; body: string }[];
}

/** A message with its stored body and the body's hash. */
interface Entry {
  message: ChatMessage;
  body: string;
  blob: string;
}

function entry(message: ChatMessage): Entry {
  const body = JSON.stringify(message);
  return { message, body, blob: sha256(body) };
}

/** A conversation after chaining: its head and messages. */
interface Chained {
  head: string | null;
  messages: ChatMessage[];
}

// Conversations kept per worker (each holds references to shared message objects).
const CACHE_ENTRIES = 256;

export class Conversations {
  private readonly cache = new Map<string, ChatMessage[]>();
  // Keyed by session and hash: values are stored per session (each is purged on its own), so a
  // text cached for one session must neither skip another's write nor answer another's read.
  private readonly texts = new Map<string, string>();

  constructor(private readonly store: () => Promise<MessageStore>) {}

  /** Stores a text once and returns its hash. */
  async putText(sessionId: string, text: string): Promise<string> {
    const hash = sha256(text);
    const key = `${sessionId}\u0000${hash}`;
    if (!this.texts.has(key)) {
      await (await this.store()).putBlobs(sessionId, [{ hash, body: text }]);
      this.remember(this.texts, key, text);
    }
    return hash;
  }

  /**
   * A text to store with a draft's commit (deferText), or none when this worker already stored it:
   * its hash either way. A model call's system text goes in the write of its reply's chain, one
   * statement a call instead of two; a call that commits nothing writes it apart (putTexts).
   */
  deferText(sessionId: string, text: string): { hash: string; body?: string } {
    const hash = sha256(text);
    return this.texts.has(`${sessionId}\u0000${hash}`) ? { hash } : { hash, body: text };
  }

  /** Stores texts deferText gave (of a draft that is not committed), in one write. */
  async putTexts(sessionId: string, texts: readonly { hash: string; body: string }[]): Promise<void> {
    const fresh = texts.filter((t) => !this.texts.has(`${sessionId}\u0000${t.hash}`));
    if (fresh.length === 0) return;
    await (await this.store()).putBlobs(sessionId, fresh);
    for (const t of fresh) this.remember(this.texts, `${sessionId}\u0000${t.hash}`, t.body);
  }

  /** A stored text by hash. */
  async getText(sessionId: string, hash: string): Promise<string> {
    const got = (await this.textsOf(sessionId, [hash])).get(hash);
    if (got === undefined) throw new StoreUnavailableError(`stored value ${hash} of session ${sessionId} is missing from the store`);
    return got;
  }

  /**
   * Stored texts by hash: those this worker wrote or read lately from its cache, the rest in one
   * read (a large tool result the tool activity stored here is not read back by the model call).
   */
  private async textsOf(sessionId: string, hashes: readonly string[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    const missing: string[] = [];
    for (const hash of hashes) {
      const cached = this.texts.get(`${sessionId}\u0000${hash}`);
      if (cached !== undefined) found.set(hash, cached);
      else missing.push(hash);
    }
    if (missing.length === 0) return found;
    for (const [hash, body] of await (await this.store()).getBlobs(sessionId, missing)) {
      found.set(hash, body);
      this.remember(this.texts, `${sessionId}\u0000${hash}`, body);
    }
    return found;
  }

  /** Stores one message (a large tool result) and returns the hash the workflow refers to it by. */
  async putMessage(sessionId: string, message: ChatMessage): Promise<string> {
    return this.putText(sessionId, JSON.stringify(message));
  }

  /** The messages of the chain ending at `head` (none for null). */
  async load(sessionId: string, head: string | null): Promise<ChatMessage[]> {
    if (head === null) return [];
    const key = `${sessionId}\u0000${head}`;
    const cached = this.cache.get(key);
    if (cached) return cached;
    const store = await this.store();
    const nodes = await store.readChain(sessionId, head);
    const bodies = await store.getBlobs(sessionId, [...new Set(nodes.map((n) => n.blob))]);
    const messages = nodes.map((n) => {
      const body = bodies.get(n.blob);
      if (body === undefined) throw new StoreUnavailableError(`message ${n.blob} of session ${sessionId} is missing from the store`);
      return JSON.parse(body) as ChatMessage;
    });
    this.remember(this.cache, key, messages);
    return messages;
  }

  /**
   * Chains `pending` then `extra` after `head`: stores inline messages, resolves stored ones,
   * writes the bodies and nodes in one round trip, and returns the new head with all the messages.
   */
  async append(sessionId: string, head: string | null, pending: readonly PendingMessage[], extra: readonly ChatMessage[] = []): Promise<Chained> {
    return this.commit(sessionId, await this.draft(sessionId, head, pending), extra);
  }

  /**
   * A conversation with its pending messages resolved but nothing written yet: a model call
   * reads it, then commits it with the reply in a single write.
   */
  async draft(sessionId: string, head: string | null, pending: readonly PendingMessage[]): Promise<Draft> {
    const base = await this.load(sessionId, head);
    const refs = pending.flatMap((p) => ('ref' in p ? [p.ref] : []));
    const resolved = await this.textsOf(sessionId, refs);
    const added = pending.map((p) => {
      if (!('ref' in p)) return entry(p.message);
      const body = resolved.get(p.ref);
      if (body === undefined) throw new StoreUnavailableError(`message ${p.ref} of session ${sessionId} is missing from the store`);
      return { message: JSON.parse(body) as ChatMessage, body, blob: p.ref };
    });
    return { head, messages: [...base, ...added.map((a) => a.message)], added };
  }

  /** Writes a draft's messages and `extra` after its head; returns the new head and all the messages. */
  async commit(sessionId: string, draft: Draft, extra: readonly ChatMessage[] = []): Promise<Chained> {
    const added = [...draft.added, ...extra.map(entry)];
    const texts = draft.texts ?? [];
    if (added.length === 0) {
      await this.putTexts(sessionId, texts);
      return { head: draft.head, messages: draft.messages };
    }
    const nodes: StoredNode[] = [];
    let parent = draft.head;
    for (const a of added) {
      const hash = nodeHash(parent, a.blob);
      nodes.push({ hash, parent, blob: a.blob });
      parent = hash;
    }
    await (await this.store()).putChain(sessionId, [...texts, ...added.map((a) => ({ hash: a.blob, body: a.body }))], nodes);
    for (const t of texts) this.remember(this.texts, `${sessionId}\u0000${t.hash}`, t.body);
    const messages = [...draft.messages, ...extra];
    this.remember(this.cache, `${sessionId}\u0000${parent}`, messages);
    return { head: parent, messages };
  }

  /** The messages of a conversation reference, without writing anything (traces, tests). */
  async read(sessionId: string, ref: { head: string | null; pending: readonly PendingMessage[] }): Promise<ChatMessage[]> {
    const base = await this.load(sessionId, ref.head);
    const refs = ref.pending.flatMap((p) => ('ref' in p ? [p.ref] : []));
    const bodies = await this.textsOf(sessionId, refs);
    const pending = ref.pending.map((p) => {
      if (!('ref' in p)) return p.message;
      const body = bodies.get(p.ref);
      if (body === undefined) throw new StoreUnavailableError(`message ${p.ref} of session ${sessionId} is missing from the store`);
      return JSON.parse(body) as ChatMessage;
    });
    return [...base, ...pending];
  }

  /** Stores `messages` as a new chain from the root (a compressed conversation) and returns its head. */
  async replace(sessionId: string, messages: readonly ChatMessage[]): Promise<string | null> {
    return (await this.append(sessionId, null, [], messages)).head;
  }

  private remember<V>(map: Map<string, V>, key: string, value: V): void {
    map.delete(key);
    map.set(key, value);
    if (map.size > CACHE_ENTRIES) map.delete(map.keys().next().value as string);
  }
}
