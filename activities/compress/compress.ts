/**
 * compressContext: shrinks a model call's messages below the configured threshold.
 *   1. compact large tool results (structure kept, see deterministic/context/compact.ts);
 *   2. if still over, replace the middle (between the goal and the tail) by ONE summary;
 *   3. if still over, truncate the largest non-head messages harder;
 *   4. never grow: a result that is not smaller than the input is discarded.
 * Independent of Temporal: the activity wraps it with a model-backed summarizer.
 */
import { compactToolResults, truncateText } from '../../deterministic/context/compact';
import { headEnd, limitTokens, planContext, splitByPlan } from '../../deterministic/context/plan';
import { SUMMARY_PROMPT, summaryMessage } from '../../deterministic/context/summary';
import type { CompressRequest, CompressResult } from '../../deterministic/context/types';
import type { ChatMessage } from '../../deterministic/types';
import { countTokens } from './tokens';

/** What compression needs from outside. */
export interface CompressDeps {
  /** One model call summarising `messages` following `prompt`. */
  summarize(messages: ChatMessage[], prompt: string): Promise<string>;
  /** Tokens of a whole request's messages. */
  count(messages: ChatMessage[]): number;
}

/** Messages shorter than this are never truncated further. */
const MIN_TRUNCATE_CHARS = 200;
/** Bound on hard-truncation rounds. */
const MAX_TRUNCATE_ROUNDS = 64;

/** Default deps.count: the real tokenizer for the request's model. */
export function tokenCounter(model: string): (messages: ChatMessage[]) => number {
  return (messages) => countTokens(messages, model);
}

/** Compresses `messages` when they exceed the threshold; after_tokens <= before_tokens always. */
export async function compressContext(req: CompressRequest, deps: CompressDeps): Promise<CompressResult> {
  const { config } = req;
  const original = req.messages;
  const before = deps.count(original);
  const limit = limitTokens(config);
  const result = (messages: ChatMessage[], extra: Partial<CompressResult> = {}): CompressResult => ({
    messages,
    compressed: messages !== original,
    before_tokens: before,
    after_tokens: messages === original ? before : deps.count(messages),
    before_chars: chars(original),
    after_chars: chars(messages),
    limit_tokens: limit,
    summarized_messages: 0,
    compacted_tool_results: 0,
    truncated_messages: 0,
    compacted: [],
    ...extra,
  });
  if (before <= limit && !req.force) return result(original);

  // 1. Compact large tool results.
  const minChars = config.compactToolResultsOver ?? 2_000;
  const quick = additiveCounter(deps.count);
  // Without force, compaction stops once under the limit: recent results stay verbatim when older ones suffice.
  const enough = req.force ? undefined : (ms: readonly ChatMessage[]) => quick(ms) <= limit;
  const compactedRun = compactToolResults(original, { minChars, maxRecordChars: config.maxRecordChars ?? 1_600 }, enough);
  let messages = compactedRun.messages;
  let tokens = deps.count(messages);

  // 2. Summarise the middle with one model call.
  let summarized = 0;
  if (tokens > limit || req.force) {
    const counts = perMessage(messages, deps.count);
    const plan = planContext(messages, counts, config, tokens);
    const { head, middle, tail } = splitByPlan(messages, plan);
    if (middle.length > 0) {
      const text = await deps.summarize(middle, SUMMARY_PROMPT);
      const summary = shrinkSummary(text, middle, req.date, plan.middleTokens, deps.count);
      if (summary) {
        messages = [...head, summary, ...tail];
        summarized = middle.length;
        tokens = deps.count(messages);
      }
    }
  }

  // 3. Truncate harder while still over the threshold.
  let truncated = 0;
  if (tokens > limit) ({ messages, truncated } = truncateHarder(messages, limit, deps.count));

  // 4. Never grow, in tokens or characters: no smaller variant means no change.
  if (deps.count(messages) >= before || chars(messages) > chars(original)) return result(original);
  const kept = new Set(messages.flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : [])));
  const compacted = compactedRun.compacted.filter((c) => kept.has(c.tool_call_id));
  return result(messages, {
    summarized_messages: summarized,
    compacted_tool_results: compacted.length,
    truncated_messages: truncated,
    compacted,
  });
}

/** The summary message, cut until it is smaller than the middle it replaces; undefined when impossible. */
function shrinkSummary(
  text: string,
  middle: ChatMessage[],
  date: string,
  middleTokens: number,
  count: (m: ChatMessage[]) => number,
): ChatMessage | undefined {
  const base = count([]);
  let body = text.trim();
  // A summary may never be longer than half of what it replaces, in characters.
  body = truncateText(body, Math.max(0, Math.floor(chars(middle) / 2)));
  for (let round = 0; round < 16; round++) {
    const msg = summaryMessage(body, middle.length, date);
    if (count([msg]) - base < middleTokens) return msg;
    if (body.length === 0) return undefined;
    body = truncateText(body, Math.floor(body.length / 2));
  }
  return undefined;
}

/** Halves the largest message outside the head until under the limit (or nothing is left to cut). */
function truncateHarder(
  input: ChatMessage[],
  limit: number,
  count: (m: ChatMessage[]) => number,
): { messages: ChatMessage[]; truncated: number } {
  const messages = [...input];
  const head = headEnd(messages);
  const touched = new Set<number>();
  for (let round = 0; round < MAX_TRUNCATE_ROUNDS && count(messages) > limit; round++) {
    let largest = -1;
    for (let i = head; i < messages.length; i++) {
      const len = (messages[i].content ?? '').length;
      if (len >= MIN_TRUNCATE_CHARS && (largest === -1 || len > (messages[largest].content ?? '').length)) largest = i;
    }
    if (largest === -1) break;
    const m = messages[largest];
    const content = truncateText(m.content ?? '', Math.floor((m.content ?? '').length / 2));
    messages[largest] = { ...m, content } as ChatMessage;
    touched.add(largest);
  }
  return { messages, truncated: touched.size };
}

/** Sums cached per-message counts (messages are immutable; unchanged ones are the same objects). */
function additiveCounter(count: (m: ChatMessage[]) => number): (messages: readonly ChatMessage[]) => number {
  const base = count([]);
  const cache = new WeakMap<ChatMessage, number>();
  return (messages) =>
    messages.reduce((sum, m) => {
      let n = cache.get(m);
      if (n === undefined) cache.set(m, (n = count([m]) - base));
      return sum + n;
    }, base);
}

function perMessage(messages: ChatMessage[], count: (m: ChatMessage[]) => number): number[] {
  const base = count([]);
  return messages.map((m) => count([m]) - base);
}

function chars(messages: readonly ChatMessage[]): number {
  return messages.reduce((sum, m) => {
    const calls = m.role === 'assistant' ? (m.tool_calls ?? []).reduce((s, c) => s + c.name.length + c.arguments.length, 0) : 0;
    return sum + (m.content ?? '').length + calls;
  }, 0);
}
