/**
 * Context planning: decides whether the next model call needs compression and how the
 * conversation splits into head (system + original goal), middle (to summarise) and tail
 * (kept verbatim). PURE and deterministic (workflow-safe): token counts are passed in.
 */
import type { ChatMessage } from '../types';

/** Compression settings (all sizes in tokens unless noted). */
export interface CompressionConfig {
  /** The model's context window. */
  contextWindow: number;
  /**
   * When to compress: a fraction (0 < t <= 1) of the usable budget (contextWindow - outputReserve),
   * or, when > 1, an absolute token count (capped at the usable budget).
   */
  threshold: number;
  /** Tokens kept free for the model's reply. */
  outputReserve: number;
  /** The last N messages are kept verbatim (the boundary moves back to keep tool-call pairs whole). */
  keepTail: number;
  /** Tool results longer than this many characters are compacted (default 2,000). */
  compactToolResultsOver?: number;
  /** Upper bound on one compacted record, in characters (default 1,600). */
  maxRecordChars?: number;
}

/** Defaults a harness config can start from (a 128k-token model). */
export const DEFAULT_COMPRESSION: CompressionConfig = {
  contextWindow: 128_000,
  threshold: 0.8,
  outputReserve: 8_000,
  keepTail: 6,
  compactToolResultsOver: 2_000,
  maxRecordChars: 1_600,
};

/** How the messages split; ranges are [start, end) indexes into the input array. */
interface ContextPlan {
  /** True when the total is above the limit. */
  compress: boolean;
  totalTokens: number;
  /** The token count above which compression triggers. */
  limitTokens: number;
  /** head = [0, headEnd): leading system messages and the first user message (the goal). */
  headEnd: number;
  /** middle = [headEnd, tailStart), tail = [tailStart, length). */
  tailStart: number;
  middleTokens: number;
  tailTokens: number;
}

/** The token count above which compression triggers. */
export function limitTokens(config: CompressionConfig): number {
  const budget = Math.max(1, config.contextWindow - Math.max(0, config.outputReserve));
  if (config.threshold > 0 && config.threshold <= 1) return Math.floor(budget * config.threshold);
  return Math.min(Math.floor(config.threshold), budget);
}

/** Index one past the head: leading system messages plus the first user message, if any. */
export function headEnd(messages: readonly ChatMessage[]): number {
  let i = 0;
  while (i < messages.length && messages[i].role === 'system') i++;
  const firstUser = messages.findIndex((m, j) => j >= i && m.role === 'user');
  return firstUser === -1 ? i : firstUser + 1;
}

/**
 * Start of the tail: the last `keepTail` messages, moved back so the tail never begins with
 * tool results whose assistant message (the one with the tool_calls) would be left behind.
 */
export function tailStart(messages: readonly ChatMessage[], keepTail: number, head: number): number {
  let start = Math.max(head, messages.length - Math.max(0, Math.floor(keepTail)));
  while (start > head && messages[start]?.role === 'tool') start--;
  return start;
}

/** True when no tool message is separated from the assistant message that called it. */
export function pairsIntact(messages: readonly ChatMessage[]): boolean {
  const called = new Set<string>();
  for (const m of messages) {
    if (m.role === 'assistant') {
      called.clear();
      for (const c of m.tool_calls ?? []) called.add(c.id);
    } else if (m.role === 'tool') {
      if (!called.has(m.tool_call_id)) return false;
    } else {
      called.clear();
    }
  }
  return true;
}

/** Plans compression from per-message token counts (same length as `messages`). */
export function planContext(
  messages: readonly ChatMessage[],
  counts: readonly number[],
  config: CompressionConfig,
  totalTokens: number = sum(counts),
): ContextPlan {
  if (counts.length !== messages.length) throw new Error(`planContext: ${counts.length} counts for ${messages.length} messages`);
  const limit = limitTokens(config);
  const head = headEnd(messages);
  const tail = tailStart(messages, config.keepTail, head);
  return {
    compress: totalTokens > limit,
    totalTokens,
    limitTokens: limit,
    headEnd: head,
    tailStart: tail,
    middleTokens: sum(counts.slice(head, tail)),
    tailTokens: sum(counts.slice(tail)),
  };
}

/** The three parts of a plan as arrays. */
export function splitByPlan<T>(items: readonly T[], plan: Pick<ContextPlan, 'headEnd' | 'tailStart'>): { head: T[]; middle: T[]; tail: T[] } {
  return {
    head: items.slice(0, plan.headEnd),
    middle: items.slice(plan.headEnd, plan.tailStart),
    tail: items.slice(plan.tailStart),
  };
}

function sum(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}
