/**
 * The conversation as workflow code holds it: not the messages but a reference to them. Every
 * message is stored once, content-addressed, by an activity; the conversation is the head of a
 * hash chain over them (as a git commit names its history), plus the few messages of the last
 * step not yet chained. So a model call's input stays the same size at step 1 and at step 1,000.
 * Plain JSON (it travels through history); no Node built-ins (workflow code imports it).
 */
import type { ChatMessage } from './types';

/** A message waiting to be chained: small ones inline, large ones already stored (by hash). */
export type PendingMessage = { message: ChatMessage } | { ref: string; tokens: number };

/** A conversation by reference. `head` names the chained part (null: nothing chained yet). */
export interface ConversationRef {
  head: string | null;
  pending: PendingMessage[];
  /** Messages in the conversation, chained and pending. */
  count: number;
  /** Estimated tokens of the conversation (by script), for the compression trigger. */
  tokens: number;
}

/** An empty conversation. */
export const EMPTY_CONVERSATION: ConversationRef = { head: null, pending: [], count: 0, tokens: 0 };

/**
 * A large string argument of a tool call, stored once: what the workflow sees in its place.
 * Tool definitions name the arguments that may be stored this way (payloads such as a file's
 * content), never those a policy decides on (paths, commands, URLs).
 */
export interface BlobArg {
  $blob: string;
  bytes: number;
  /** The start of the value, for records and traces. */
  preview: string;
}

/** Whether a value is a stored argument. */
export function isBlobArg(v: unknown): v is BlobArg {
  return typeof v === 'object' && v !== null && typeof (v as BlobArg).$blob === 'string' && typeof (v as BlobArg).bytes === 'number';
}

/** The system message by reference: its text travels only when it changed (hash = SHA-256 of the text). */
export interface SystemRef {
  hash: string;
  text?: string;
}
