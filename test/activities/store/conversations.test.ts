import { describe, expect, it } from 'vitest';
import { Conversations, nodeHash, sha256 } from '../../../activities/store/conversations';
import { InMemoryMessageStore, StoreUnavailableError } from '../../../activities/store/message-store';
import type { ChatMessage } from '../../../deterministic/types';

const user: ChatMessage = { role: 'user', content: 'hello' };
const assistant: ChatMessage = { role: 'assistant', content: null, tool_calls: [{ id: 't1-s1-c0', name: 'list_files', arguments: '{}' }] };
const tool: ChatMessage = { role: 'tool', tool_call_id: 't1-s1-c0', content: '{"ok":true}' };

describe('Conversations', () => {
  it('chains messages after a head and names the result by a head that hashes its whole history', async () => {
    const store = new InMemoryMessageStore();
    const c = new Conversations(async () => store);
    const first = await c.append('s1', null, [{ message: user }]);
    expect(first.head).toBe(nodeHash(null, sha256(JSON.stringify(user))));
    const second = await c.append('s1', first.head, [], [assistant]);
    expect(second.messages).toEqual([user, assistant]);
    expect(second.head).toBe(nodeHash(first.head, sha256(JSON.stringify(assistant))));
  });

  it('writes nothing twice: a retried append gives the same head and stores the same rows', async () => {
    const store = new InMemoryMessageStore();
    const a = await new Conversations(async () => store).append('s1', null, [{ message: user }], [assistant]);
    // A retry on another worker: a fresh cache, the same store.
    const b = await new Conversations(async () => store).append('s1', null, [{ message: user }], [assistant]);
    expect(b.head).toBe(a.head);
    expect(await store.purge('s1')).toBe(4); // two bodies, two nodes
  });

  it('rebuilds a conversation from the store alone on a worker that never saw it, pending references included', async () => {
    const store = new InMemoryMessageStore();
    const writer = new Conversations(async () => store);
    const { head } = await writer.append('s1', null, [{ message: user }], [assistant]);
    const ref = await writer.putMessage('s1', tool);
    const reader = new Conversations(async () => store);
    expect(await reader.read('s1', { head, pending: [{ ref, tokens: 5 }] })).toEqual([user, assistant, tool]);
    expect(await reader.load('s1', head)).toEqual([user, assistant]);
  });

  it('reads back nothing it wrote itself: a tool result this worker stored is chained into the next call without a store read', async () => {
    const store = new InMemoryMessageStore();
    let reads = 0;
    const getBlobs = store.getBlobs.bind(store);
    store.getBlobs = async (sessionId, hashes) => {
      reads += 1;
      return getBlobs(sessionId, hashes);
    };
    const c = new Conversations(async () => store);
    const { head } = await c.append('s1', null, [{ message: user }], [assistant]);
    const ref = await c.putMessage('s1', tool);
    const draft = await c.draft('s1', head, [{ ref, tokens: 5 }]);
    expect(draft.messages).toEqual([user, assistant, tool]);
    expect(await c.read('s1', { head, pending: [{ ref, tokens: 5 }] })).toEqual([user, assistant, tool]);
    expect(reads).toBe(0);
    // Another session's draft naming the same hash is not answered from this one's cache.
    await expect(c.draft('s2', null, [{ ref, tokens: 5 }])).rejects.toThrow(/missing from the store/);
    expect(reads).toBe(1);
  });

  it('fails with StoreUnavailableError, naming what is missing, when a referenced message is not stored', async () => {
    const c = new Conversations(async () => new InMemoryMessageStore());
    await expect(c.append('s1', 'no-such-head', [])).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(c.append('s1', null, [{ ref: 'f'.repeat(64), tokens: 1 }])).rejects.toThrow(/missing from the store/);
  });

  it('stores a compressed conversation as a new chain from the root, keeping the old one', async () => {
    const store = new InMemoryMessageStore();
    const c = new Conversations(async () => store);
    const old = await c.append('s1', null, [{ message: user }], [assistant]);
    const summary: ChatMessage = { role: 'assistant', content: '[summary of 2 earlier messages]' };
    const head = await c.replace('s1', [user, summary]);
    expect(await new Conversations(async () => store).load('s1', head)).toEqual([user, summary]);
    expect(await new Conversations(async () => store).load('s1', old.head)).toEqual([user, assistant]);
  });

  it('keeps sessions apart: a head of one session names nothing in another', async () => {
    const store = new InMemoryMessageStore();
    const c = new Conversations(async () => store);
    const { head } = await c.append('s1', null, [{ message: user }]);
    await expect(new Conversations(async () => store).load('s2', head)).rejects.toBeInstanceOf(StoreUnavailableError);
  });

  it('stores a text for each session that puts it, even when the worker has it cached for another', async () => {
    const store = new InMemoryMessageStore();
    const c = new Conversations(async () => store);
    const hash = await c.putText('s1', 'the same tool output');
    expect(await c.getText('s1', hash)).toBe('the same tool output');
    // A second session with the same text (a fork's copy, two sessions reading one file).
    expect(await c.putText('s2', 'the same tool output')).toBe(hash);
    // Another worker (no cache) finds it under s2; and s1's cache never answers for s3.
    expect(await new Conversations(async () => store).getText('s2', hash)).toBe('the same tool output');
    await expect(c.getText('s3', hash)).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});
