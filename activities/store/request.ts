/**
 * The messages a model call or a compression sends: given inline (turns recorded before the
 * message store), or rebuilt from a conversation reference with the system message first and the
 * step's notes (memory) last.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { ConversationRef, SystemRef } from '../../deterministic/conversation';
import type { ChatMessage } from '../../deterministic/types';
import type { Conversations, Draft } from './conversations';

/** What a call names its context by. */
interface ContextRequest {
  sessionId: string;
  messages?: ChatMessage[];
  conversation?: Pick<ConversationRef, 'head' | 'pending'>;
  system?: SystemRef;
  notes?: SystemRef;
}

/**
 * The request's messages; with a reference also the draft (pending messages read, not yet
 * written: a model call stores them with its reply, in one write). With `defer` the system text
 * and notes the request brings are not written here either: the draft carries them to its commit.
 */
export async function requestContext(input: ContextRequest, conversations: Conversations | undefined, opts: { defer?: boolean } = {}): Promise<{ messages: ChatMessage[]; draft?: Draft }> {
  if (!input.conversation) return { messages: input.messages ?? [] };
  if (!conversations) throw ApplicationFailure.nonRetryable('this worker has no message store', 'STORE_UNAVAILABLE');
  const texts: { hash: string; body: string }[] = [];
  const text = async (ref: SystemRef | undefined) => {
    if (!opts.defer || ref?.text === undefined) return systemText(input.sessionId, ref, conversations);
    const deferred = conversations.deferText(input.sessionId, ref.text);
    if (deferred.body !== undefined) texts.push({ hash: deferred.hash, body: deferred.body });
    return ref.text;
  };
  const system = await text(input.system);
  const draft = await conversations.draft(input.sessionId, input.conversation.head, input.conversation.pending);
  // The notes come last and stay out of the draft: the next step sends them again, after its own conversation.
  const notes = input.notes ? await text(input.notes) : '';
  const after: ChatMessage[] = notes ? [{ role: 'system', content: notes }] : [];
  return { messages: [{ role: 'system', content: system }, ...draft.messages, ...after], draft: texts.length ? { ...draft, texts } : draft };
}

/** The system text: given (and stored for later calls of the run) or read back by its hash. */
async function systemText(sessionId: string, ref: SystemRef | undefined, conversations: Conversations): Promise<string> {
  if (!ref) return '';
  if (ref.text === undefined) return conversations.getText(sessionId, ref.hash);
  await conversations.putText(sessionId, ref.text);
  return ref.text;
}
