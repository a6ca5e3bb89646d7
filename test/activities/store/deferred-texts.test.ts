/**
 * A model call's system text and notes are written with its reply's chain: one store write a
 * call, not one for the texts and one for the chain. Texts this worker already stored are not
 * written again; a call that commits nothing writes them on their own (putTexts); and a
 * compression's request (no `defer`) still writes them as it reads them.
 */
import { describe, expect, it } from 'vitest';
import { Conversations, sha256 } from '../../../activities/store/conversations';
import { InMemoryMessageStore } from '../../../activities/store/message-store';
import { requestContext } from '../../../activities/store/request';
import type { ChatMessage } from '../../../deterministic/types';

const user: ChatMessage = { role: 'user', content: 'hello' };
const reply: ChatMessage = { role: 'assistant', content: 'hi' };

/** A store that counts its writes (a statement each in Postgres; the memory store's putChain calls its own putBlobs). */
function countingStore() {
  const store = new InMemoryMessageStore();
  const writes: string[] = [];
  const putBlobs = store.putBlobs.bind(store);
  const putChain = store.putChain.bind(store);
  let inChain = false;
  store.putBlobs = async (...args) => {
    if (!inChain) writes.push('putBlobs');
    return putBlobs(...args);
  };
  store.putChain = async (...args) => {
    writes.push('putChain');
    inChain = true;
    try {
      return await putChain(...args);
    } finally {
      inChain = false;
    }
  };
  return { store, writes };
}

const request = (system: string, notes?: string) => ({
  sessionId: 's1',
  conversation: { head: null, pending: [{ message: user }] },
  system: { hash: sha256(system), text: system },
  ...(notes ? { notes: { hash: sha256(notes), text: notes } } : {}),
});

describe('texts a model call brings', () => {
  it('go into the one write of the reply chain', async () => {
    const { store, writes } = countingStore();
    const c = new Conversations(async () => store);
    const context = await requestContext(request('You are a bot.', 'Remember: x.'), c, { defer: true });
    expect(writes).toEqual([]);
    expect(context.messages.map((m) => m.content)).toEqual(['You are a bot.', 'hello', 'Remember: x.']);
    await c.commit('s1', context.draft!, [reply]);
    expect(writes).toEqual(['putChain']);
    // Read back by another worker by their hashes, as the run's later calls name them.
    const other = new Conversations(async () => store);
    expect(await other.getText('s1', sha256('You are a bot.'))).toBe('You are a bot.');
    expect(await other.getText('s1', sha256('Remember: x.'))).toBe('Remember: x.');
  });

  it('are written once: a text this worker stored is not carried again', async () => {
    const { store, writes } = countingStore();
    const c = new Conversations(async () => store);
    const first = await requestContext(request('You are a bot.'), c, { defer: true });
    await c.commit('s1', first.draft!, [reply]);
    const again = await requestContext(request('You are a bot.'), c, { defer: true });
    expect(again.draft!.texts ?? []).toEqual([]);
    expect(writes).toEqual(['putChain']);
  });

  it('are written on their own by a call that chains nothing, and at once by a request without defer', async () => {
    const { store, writes } = countingStore();
    const c = new Conversations(async () => store);
    const context = await requestContext(request('Failed call.'), c, { defer: true });
    await c.putTexts('s1', context.draft!.texts!);
    expect(writes).toEqual(['putBlobs']);
    expect(await new Conversations(async () => store).getText('s1', sha256('Failed call.'))).toBe('Failed call.');
    await requestContext(request('Compression.'), c);
    expect(writes).toEqual(['putBlobs', 'putBlobs']);
  });
});
