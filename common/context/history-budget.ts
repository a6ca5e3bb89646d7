/**
 * How much conversation one turn's Temporal history can hold. Every model call carries the
 * whole (compressed) conversation as its activity input, so each call is at most one compression
 * limit of tokens, one payload must stay under Temporal's 2 MB, and a turn's calls together under
 * its 50 MB history limit. Until model calls carry references instead of messages, sessions are
 * refused settings that could cross those limits. PURE and deterministic.
 */
import { limitTokens, type CompressionConfig } from './plan';

/** Bytes one token takes in a payload, with JSON escaping: generous, so the limits hold. */
export const BYTES_PER_TOKEN = 5;
/** Room per step for tool results and arguments beyond the conversation. */
export const STEP_EXTRA_BYTES = 64 * 1024;
/** What one payload may hold (Temporal rejects payloads over 2 MB). */
export const MAX_PAYLOAD_BYTES = 1.5 * 1024 * 1024;
/** What one turn's history may hold (Temporal terminates a run at 50 MB). */
export const MAX_TURN_HISTORY_BYTES = 40 * 1024 * 1024;

/** The largest compression limit (tokens) one model-call payload can carry. */
export function maxContextTokens(): number {
  return Math.floor(MAX_PAYLOAD_BYTES / BYTES_PER_TOKEN);
}

/** How many steps one turn can take with this compression setting before its history could overflow. */
export function maxStepsForHistory(c: CompressionConfig): number {
  const perStep = limitTokens(c) * BYTES_PER_TOKEN + STEP_EXTRA_BYTES;
  return Math.max(1, Math.floor(MAX_TURN_HISTORY_BYTES / perStep));
}
