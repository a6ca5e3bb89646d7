/**
 * The compressContext activity: compression with the session's own model as summariser
 * (header `x-harness-purpose: compress`, so the scripted model answers from `summaries`
 * without consuming a turn step). Its input and result are the history record.
 */
import type { ModelCallInput } from '../../deterministic/activity-types';
import { renderTranscript } from '../../deterministic/context/summary';
import type { CompressContextInput, CompressContextResult } from '../../deterministic/context/types';
import { messageTokens, type Conversations } from '../store/conversations';
import { requestContext } from '../store/request';
import type { ChatMessage, Usage } from '../../deterministic/types';
import type { ModelClient } from '../model/client';
import { toModelFailure } from '../model/errors';
import { compressContext, tokenCounter } from './compress';

/** Same shape as the callModel resolver in activities/model/activities.ts. */
type CompressModelResolver = (input: ModelCallInput) => Promise<{ client: ModelClient; endpoint: string }>;

/** A summarize function over a ModelClient: prompt as system message, the transcript as one user message. */
function modelSummarizer(
  client: ModelClient,
  opts: { model: string; headers: Record<string, string>; signal?: AbortSignal; onUsage?: (u: Usage) => void },
): (messages: ChatMessage[], prompt: string) => Promise<string> {
  return async (messages, prompt) => {
    const answer = await client.complete({
      model: opts.model,
      messages: [
        { role: 'system', content: prompt },
        { role: 'user', content: `Transcript of ${messages.length} messages to summarise:\n\n${renderTranscript(messages)}` },
      ],
      tools: [],
      headers: opts.headers,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    opts.onUsage?.(answer.usage);
    return answer.content ?? '';
  };
}

/** Builds the activity over a model resolver (the worker passes the one callModel uses). */
export function createCompressContextActivity(
  resolve: CompressModelResolver,
  opts: { signal?: () => AbortSignal | undefined; attempt?: () => number; conversations?: Conversations } = {},
) {
  return async function compressContextActivity(input: CompressContextInput): Promise<CompressContextResult> {
    const modelInput: ModelCallInput = {
      sessionId: input.sessionId,
      turnId: input.turnId,
      step: input.step,
      callIndex: input.callIndex,
      model: input.model,
      tools: [],
      purpose: 'compress',
    };
    let usage: Usage | undefined;
    const signal = opts.signal?.();
    const summarize = async (messages: ChatMessage[], prompt: string): Promise<string> => {
      const { client, endpoint } = await resolve(modelInput);
      try {
        return await modelSummarizer(client, {
          model: input.model.model,
          headers: {
            'x-harness-session': input.model.scriptKey ?? input.sessionId,
            'x-harness-call-index': String(input.callIndex),
            'x-harness-purpose': 'compress',
          },
          ...(signal ? { signal } : {}),
          onUsage: (u) => (usage = u),
        })(messages, prompt);
      } catch (err) {
        throw toModelFailure(err, endpoint);
      }
    };
    const context = await requestContext(input, opts.conversations);
    const result = await compressContext(
      {
        messages: context.messages,
        model: input.model.model,
        config: input.config,
        date: input.date ?? new Date().toISOString().slice(0, 10),
        ...(input.force ? { force: true } : {}),
      },
      { summarize, count: tokenCounter(input.model.model) },
    );
    // The attempt goes with the summary's usage: the turn counts a retried compression's waste as history shows it.
    const withUsage = { ...result, ...(usage ? { summary_usage: usage } : {}), attempt: opts.attempt?.() ?? 1 };
    if (!context.draft || !input.conversation) return withUsage;
    // With the message store: the compressed conversation becomes a new chain (the old one stays
    // for the trace); the workflow gets its reference, never the messages. Uncompressed, the
    // reference stays as it was (its pending messages are stored by the next model call).
    const { messages, ...stats } = withUsage;
    const tokens = (list: ChatMessage[]) => list.reduce((n, m) => n + messageTokens(m), 0);
    if (!result.compressed) {
      const kept = context.draft.messages;
      return { ...stats, conversation: { ...input.conversation, count: kept.length, tokens: tokens(kept) } };
    }
    const rest = messages.slice(1);
    const head = await opts.conversations!.replace(input.sessionId, rest);
    return { ...stats, conversation: { head, pending: [], count: rest.length, tokens: tokens(rest) } };
  };
}
