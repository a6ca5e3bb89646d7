/**
 * The message store: content-addressed bodies (messages, large tool arguments and results, the
 * system text, scripts) and the hash-chain nodes that string messages into conversations, kept
 * per session so a session can be deleted with everything it stored. Writes are idempotent: a
 * retried activity, or a replayed one, writes the same keys again and nothing changes. Only
 * activities touch it. Two implementations: Postgres (pg-message-store.ts) and in memory (tests).
 */
import { InMemoryModelStreams, type ModelStreams } from './model-streams';
import { InMemoryCallClaims, type CallClaims } from './call-claims';
import { InMemoryEvalTrials, type EvalTrials } from './eval-trials';

/** One link of a conversation: the message body `blob` follows the node `parent`. */
export interface StoredNode {
  hash: string;
  parent: string | null;
  blob: string;
}

/** A content-addressed body. */
export interface StoredBlob {
  hash: string;
  body: string;
}

/** What the harness needs from a store. */
export interface MessageStore {
  /** Writes bodies; a hash already stored is left as it is. */
  putBlobs(sessionId: string, blobs: readonly StoredBlob[]): Promise<void>;
  /** The bodies of those hashes that are stored. */
  getBlobs(sessionId: string, hashes: readonly string[]): Promise<Map<string, string>>;
  /** Writes chain nodes (after their blobs); a node already stored is left as it is. */
  putNodes(sessionId: string, nodes: readonly StoredNode[]): Promise<void>;
  /** Writes bodies and the nodes that name them together (one round trip: one per model call). */
  putChain(sessionId: string, blobs: readonly StoredBlob[], nodes: readonly StoredNode[]): Promise<void>;
  /** The chain ending at `head`, root first; throws StoreUnavailableError when a link is missing. */
  readChain(sessionId: string, head: string): Promise<StoredNode[]>;
  /** Deletes everything stored for the session; returns the number of rows removed. */
  purge(sessionId: string): Promise<number>;
  /** Sessions with stored data whose newest write is older than `before`. */
  sessionsIdleSince(before: Date): Promise<string[]>;
  /** Where model replies' text goes as it streams, in the same database (model-streams.ts); a store without it: no streaming. */
  modelStreams?(): ModelStreams;
  /** Claims of calls that must not run twice, in the same database (call-claims.ts); a store without them: claims on the worker's disk. */
  callClaims?(): CallClaims;
  /** Eval trial reports, in the same database (eval-trials.ts); a store without them cannot run an eval that keeps its reports there. */
  evalTrials?(): EvalTrials;
}

/** The store cannot be reached (or lost data it should hold): retry later; never a silent fallback. */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
}

/** A MessageStore in memory: tests, benchmarks, and the in-process turn. */
export class InMemoryMessageStore implements MessageStore {
  private readonly blobs = new Map<string, Map<string, string>>();
  private readonly nodes = new Map<string, Map<string, StoredNode>>();
  private readonly touched = new Map<string, number>();
  // In memory too: readers in this process (tests) see the text as it streams.
  private readonly streams = new InMemoryModelStreams();
  private readonly claims = new InMemoryCallClaims();
  private readonly trials = new InMemoryEvalTrials();

  async putBlobs(sessionId: string, blobs: readonly StoredBlob[]): Promise<void> {
    const m = this.of(this.blobs, sessionId);
    for (const b of blobs) if (!m.has(b.hash)) m.set(b.hash, b.body);
    this.touched.set(sessionId, Date.now());
  }

  async getBlobs(sessionId: string, hashes: readonly string[]): Promise<Map<string, string>> {
    const m = this.of(this.blobs, sessionId);
    return new Map(hashes.flatMap((h) => (m.has(h) ? [[h, m.get(h)!] as const] : [])));
  }

  async putNodes(sessionId: string, nodes: readonly StoredNode[]): Promise<void> {
    const m = this.of(this.nodes, sessionId);
    for (const n of nodes) if (!m.has(n.hash)) m.set(n.hash, n);
    this.touched.set(sessionId, Date.now());
  }

  async putChain(sessionId: string, blobs: readonly StoredBlob[], nodes: readonly StoredNode[]): Promise<void> {
    await this.putBlobs(sessionId, blobs);
    await this.putNodes(sessionId, nodes);
  }

  async readChain(sessionId: string, head: string): Promise<StoredNode[]> {
    const m = this.of(this.nodes, sessionId);
    const out: StoredNode[] = [];
    for (let h: string | null = head; h !== null; ) {
      const n = m.get(h);
      if (!n) throw new StoreUnavailableError(`conversation node ${h} of session ${sessionId} is missing from the store`);
      out.push(n);
      h = n.parent;
    }
    return out.reverse();
  }

  async purge(sessionId: string): Promise<number> {
    const n = (this.blobs.get(sessionId)?.size ?? 0) + (this.nodes.get(sessionId)?.size ?? 0);
    this.blobs.delete(sessionId);
    this.nodes.delete(sessionId);
    this.touched.delete(sessionId);
    return n + (await this.streams.purge(sessionId)) + (await this.claims.purge(sessionId)) + (await this.trials.purge(sessionId));
  }

  modelStreams(): InMemoryModelStreams {
    return this.streams;
  }

  callClaims(): InMemoryCallClaims {
    return this.claims;
  }

  evalTrials(): InMemoryEvalTrials {
    return this.trials;
  }

  async sessionsIdleSince(before: Date): Promise<string[]> {
    return [...this.touched].filter(([, at]) => at < before.getTime()).map(([id]) => id);
  }

  private of<V>(map: Map<string, Map<string, V>>, sessionId: string): Map<string, V> {
    let m = map.get(sessionId);
    if (!m) map.set(sessionId, (m = new Map()));
    return m;
  }
}
