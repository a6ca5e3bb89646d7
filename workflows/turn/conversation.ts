/**
 * The conversation of a turn as the loop sees it: what a model call carries and what comes back.
 * Two forms. Stored (every turn of a session): a reference to the message store (a chain head
 * plus the few messages of the last step not yet chained), so history holds each message at
 * most once and a model call's input stays the same size at step 1 and at step 1,000. Inline:
 * the messages themselves, as turns carried them before the store; only the history
 * benchmark's baseline (`inlineHistory`) runs so now.
 * Pure and deterministic.
 */
import type { ModelReply, ToolOutcome } from '../../deterministic/activity-types';
import type { ConversationRef, PendingMessage, SystemRef } from '../../deterministic/conversation';
import { estimateTextTokens, messageTokens } from '../../deterministic/context/estimate';
import type { CompressContextResult } from '../../deterministic/context/types';
import { sha256Hex } from '../../deterministic/digest';
import type { TurnResult } from '../../deterministic/session';
import type { ChatMessage, ToolResult } from '../../deterministic/types';

/** What a model or compression call carries of the context. */
export type ContextParts = { messages: ChatMessage[] } | { conversation: Pick<ConversationRef, 'head' | 'pending'>; system: SystemRef; notes?: SystemRef };

/** The conversation of a turn. */
export interface TurnConversation {
  /** Adds a message the workflow made (the user's, a warning, a small tool result). */
  add(message: ChatMessage): void;
  /** Adds a tool's result: a stored one by reference. */
  addResult(callId: string, outcome: ToolOutcome): void;
  /** Estimated tokens of the context with this system text. */
  estimate(system: string): number;
  /**
   * The context parts of the next call; `notes` (a model call's memory) go after the conversation,
   * as a system message that is never part of it (a compression is given none).
   */
  context(system: string, notes?: string): ContextParts;
  /** After a model call succeeded: its reply (and the assistant message it makes). */
  replied(reply: ModelReply, assistant: ChatMessage): void;
  /** After a compression: takes its result; true when the conversation changed. */
  compressed(c: CompressContextResult): boolean;
  /** What the turn result carries of the conversation. */
  outcome(): Pick<TurnResult, 'messages' | 'replacesHistory' | 'conversation'>;
}

/** The tool message the model reads for a call's result. */
export function toolMessage(callId: string, result: ToolResult): ChatMessage {
  return { role: 'tool', tool_call_id: callId, content: JSON.stringify(result) };
}

/** The conversation by reference to the message store. */
export class StoredConversation implements TurnConversation {
  private ref: ConversationRef;
  // The system text travels only when it changed since the last successful call of this run;
  // otherwise its hash does (the store has it from that call).
  private sentSystem: string | undefined;
  private offeredSystem: string | undefined;
  // The notes likewise, by their own hash (they change when memory does, the system text does not).
  private sentNotes: string | undefined;
  private offeredNotes: string | undefined;

  constructor(start: ConversationRef) {
    this.ref = { ...start, pending: [...start.pending] };
  }

  add(message: ChatMessage): void {
    this.push({ message }, messageTokens(message));
  }

  addResult(callId: string, outcome: ToolOutcome): void {
    if (outcome.stored) this.push({ ref: outcome.stored.ref, tokens: outcome.stored.tokens }, outcome.stored.tokens);
    else this.add(toolMessage(callId, outcome));
  }

  estimate(system: string): number {
    return this.ref.tokens + estimateTextTokens(system) + 3;
  }

  context(system: string, notes?: string): ContextParts {
    const hash = sha256Hex(system);
    this.offeredSystem = hash;
    const parts = { conversation: { head: this.ref.head, pending: this.ref.pending }, system: hash === this.sentSystem ? { hash } : { hash, text: system } };
    this.offeredNotes = notes ? sha256Hex(notes) : undefined;
    if (!notes || !this.offeredNotes) return parts;
    return { ...parts, notes: this.offeredNotes === this.sentNotes ? { hash: this.offeredNotes } : { hash: this.offeredNotes, text: notes } };
  }

  replied(reply: ModelReply, _assistant: ChatMessage): void {
    if (!reply.conversation) throw new Error('the model reply carries no conversation reference');
    this.ref = reply.conversation;
    this.sentSystem = this.offeredSystem;
    if (this.offeredNotes) this.sentNotes = this.offeredNotes;
  }

  compressed(c: CompressContextResult): boolean {
    if (c.conversation) {
      this.ref = c.conversation;
      this.sentSystem = this.offeredSystem;
    }
    return c.compressed;
  }

  outcome(): Pick<TurnResult, 'conversation'> {
    return { conversation: this.snapshot() };
  }

  /** The reference as it stands (carried by continue-as-new and to the session). */
  snapshot(): ConversationRef {
    return { ...this.ref, pending: [...this.ref.pending] };
  }

  private push(p: PendingMessage, tokens: number): void {
    this.ref.pending.push(p);
    this.ref.count += 1;
    this.ref.tokens += tokens;
  }
}

/** The conversation as messages (the history benchmark's inline baseline). */
export class InlineConversation implements TurnConversation {
  private added: ChatMessage[] = [];
  private replaced = false;

  constructor(private history: ChatMessage[]) {}

  add(message: ChatMessage): void {
    this.added.push(message);
  }

  addResult(callId: string, outcome: ToolOutcome): void {
    this.added.push(toolMessage(callId, outcome));
  }

  estimate(system: string): number {
    let tokens = 0;
    for (const m of [{ role: 'system' as const, content: system }, ...this.history, ...this.added]) tokens += messageTokens(m);
    return tokens;
  }

  context(system: string, notes?: string): ContextParts {
    const after: ChatMessage[] = notes ? [{ role: 'system', content: notes }] : [];
    return { messages: [{ role: 'system', content: system }, ...this.history, ...this.added, ...after] };
  }

  replied(_reply: ModelReply, assistant: ChatMessage): void {
    this.added.push(assistant);
  }

  compressed(c: CompressContextResult): boolean {
    if (!c.compressed || !c.messages) return false;
    this.history = c.messages.slice(1); // the system message is rebuilt every step
    this.added = [];
    this.replaced = true;
    return true;
  }

  outcome(): Pick<TurnResult, 'messages' | 'replacesHistory'> {
    return { messages: this.replaced ? [...this.history, ...this.added] : this.added, ...(this.replaced ? { replacesHistory: true } : {}) };
  }

  /** The messages added this turn (cancellation closes the open calls among them). */
  get recent(): ChatMessage[] {
    return this.added;
  }
}
