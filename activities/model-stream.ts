/**
 * A chat completion streamed (`stream: true`, usage asked for in the last chunk) and put back
 * together into the same ModelAnswer the plain request gives: text, tool calls by index, a
 * reasoning model's thinking, the finish reason, usage (estimated, and marked, when the server
 * sends none). Each text chunk goes to `onText` as it arrives. An endpoint that refuses to stream
 * is asked again without, and not asked to stream again by this worker. The events are read by
 * model-body.ts (one pass, bounded); what they add up to is bounded by the same limit.
 */
import OpenAI from 'openai';
import type { ModelAnswer, ModelRequest } from './model-client';
import type { ToolCall } from '../common/types';
import { estimateUsage, providerUsage } from './model-usage';
import { replyTooLarge, sseData } from './model-body';

type Body = OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;

/** Endpoints (base URL) that refused a streamed request: asked plainly from then on. */
const refused = new Set<string>();

type Chunk = OpenAI.Chat.ChatCompletionChunk;

/** Streams when the endpoint takes it, else asks plainly (`plain`); a reply's text, thinking and calls together are at most `limit` bytes. */
export async function streamOrPlain(client: OpenAI, endpoint: string, body: Body, req: ModelRequest, plain: () => Promise<ModelAnswer>, limit: number): Promise<ModelAnswer> {
  if (!req.onText || refused.has(endpoint)) return plain();
  let chunks = 0;
  try {
    return await streamed(client, body, req, () => chunks++, limit);
  } catch (err) {
    // Refused before anything came (a server without streaming): plainly, now and later.
    const status = (err as { status?: number }).status;
    if (chunks === 0 && (status === 400 || status === 404 || status === 415 || status === 422 || status === 501)) {
      refused.add(endpoint);
      return plain();
    }
    throw err;
  }
}

async function streamed(client: OpenAI, body: Body, req: ModelRequest, onChunk: () => void, limit: number): Promise<ModelAnswer> {
  // The raw response (the client still checks its status): its events are read by sseData.
  const res = await client.chat.completions
    .create({ ...body, stream: true, stream_options: { include_usage: true } }, { headers: req.headers, ...(req.signal ? { signal: req.signal } : {}) })
    .asResponse();
  let bytes = 0;
  const count = (text: string) => {
    bytes += Buffer.byteLength(text, 'utf8');
    if (bytes > limit) throw replyTooLarge(limit);
  };
  let content = '';
  let reasoning = '';
  let model = req.model;
  let finishReason: string | undefined;
  let usage: ModelAnswer['usage'] | undefined;
  const calls: { id: string; name: string; arguments: string }[] = [];
  for await (const data of sseData(res.body, limit)) {
    if (data === '[DONE]') break;
    const chunk = parseChunk(data, res.headers);
    onChunk();
    if (chunk.model) model = chunk.model;
    if (chunk.usage) usage = providerUsage(chunk.usage);
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    if (choice.finish_reason) finishReason = choice.finish_reason;
    const delta = choice.delta ?? {};
    if (typeof delta.content === 'string' && delta.content) {
      count(delta.content);
      content += delta.content;
      req.onText!(delta.content);
    }
    const think = (delta as { reasoning_content?: unknown; reasoning?: unknown }).reasoning_content ?? (delta as { reasoning?: unknown }).reasoning;
    if (typeof think === 'string') {
      count(think);
      reasoning += think;
    }
    for (const d of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
      // An index is where the call goes in a list: a huge or odd one would make a huge list.
      if (!Number.isInteger(d.index) || d.index < 0 || d.index > MAX_CALL_INDEX) continue;
      const c = (calls[d.index] ??= { id: '', name: '', arguments: '' });
      if (typeof d.id === 'string' && d.id) {
        count(d.id);
        c.id = d.id;
      }
      if (typeof d.function?.name === 'string' && d.function.name) {
        count(d.function.name);
        c.name += d.function.name;
      }
      if (typeof d.function?.arguments === 'string' && d.function.arguments) {
        count(d.function.arguments);
        c.arguments += d.function.arguments;
      }
    }
  }
  const toolCalls: ToolCall[] = calls.filter((c) => c && c.name).map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }));
  const text = content === '' && toolCalls.length ? null : content;
  return {
    content: text,
    toolCalls,
    usage: usage ?? estimateUsage(req, text, toolCalls),
    model,
    ...(finishReason ? { finishReason } : {}),
    ...(reasoning.trim() ? { reasoning } : {}),
    ...(usage ? {} : { usageEstimated: true }),
  };
}

/** Calls of one streamed reply are indexed below this (a reply keeps 64 of them: model-reply.ts). */
const MAX_CALL_INDEX = 4096;

/** One event's chunk; an error the endpoint sends mid-stream fails the attempt as the client's own reader does. */
function parseChunk(data: string, headers: Headers): Chunk {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new Error(`the model endpoint sent a stream event that is not JSON (${data.length} characters)`);
  }
  if (!value || typeof value !== 'object') throw new Error('the model endpoint sent a stream event that is not an object');
  const error = (value as { error?: unknown }).error;
  if (error) throw new OpenAI.APIError(undefined, error as object, undefined, headers);
  return value as Chunk;
}
