/**
 * A chat completion streamed (`stream: true`, usage asked for in the last chunk) and put back
 * together into the same ModelAnswer the plain request gives: text, tool calls by index, a
 * reasoning model's thinking, the finish reason, usage (estimated, and marked, when the server
 * sends none). Each text chunk goes to `onText` as it arrives. The events are read by
 * model-body.ts (one pass, bounded); what they add up to is bounded by the same limit.
 *
 * An endpoint that does not stream is asked plainly, and not asked to stream again by this
 * worker (for that model), only on evidence that streaming is what it refused: an error whose
 * words or `param` name `stream` (OpenAI's reasoning models answer `Unsupported value: 'stream'
 * does not support true with this model`, with `param: "stream"`; servers without
 * `stream_options` name that), or a whole JSON reply to the stream request (a server that ignores
 * `stream`), which is then the answer. Any other error, a 400 included, is the request's own and
 * fails the attempt as a plain request's would (model-errors.ts): sending it again unstreamed
 * would only be refused again, or worse, answer a request that was wrong.
 */
import OpenAI from 'openai';
import type { ModelAnswer, ModelRequest } from './client';
import type { ToolCall } from '../../deterministic/types';
import { estimateUsage, providerUsage } from './usage';
import { replyTooLarge, sseData } from './body';

type Body = OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;

/** Endpoints and models (`endpoint|model`) that refused to stream: asked plainly from then on. */
const refused = new Set<string>();

type Chunk = OpenAI.Chat.ChatCompletionChunk;

/**
 * Streams when the endpoint takes it, else asks plainly (`plain`); a whole reply to the stream
 * request is read by `whole`. A reply's text, thinking and calls together are at most `limit` bytes.
 */
export async function streamOrPlain(
  client: OpenAI,
  endpoint: string,
  body: Body,
  req: ModelRequest,
  plain: () => Promise<ModelAnswer>,
  whole: (res: Response) => Promise<ModelAnswer>,
  limit: number,
): Promise<ModelAnswer> {
  const key = `${endpoint}|${body.model}`;
  if (!req.onText || refused.has(key)) return plain();
  let res: Response;
  try {
    // The raw response (the client still checks its status): its events are read by sseData.
    res = await client.chat.completions
      .create({ ...body, stream: true, stream_options: { include_usage: true } }, { headers: req.headers, ...(req.signal ? { signal: req.signal } : {}) })
      .asResponse();
  } catch (err) {
    if (!refusesStreaming(err)) throw err;
    refused.add(key);
    return plain();
  }
  if (/\bjson\b/i.test(res.headers.get('content-type') ?? '')) {
    refused.add(key);
    return whole(res);
  }
  return streamed(res, req, limit);
}

/**
 * Whether a stream request was refused for streaming itself: a client error (or 501) whose
 * `param` or words name `stream` / `stream_options`. Rate limits and timeouts are not refusals.
 */
export function refusesStreaming(err: unknown): boolean {
  if (!(err instanceof OpenAI.APIError) || typeof err.status !== 'number') return false;
  const clientError = err.status >= 400 && err.status < 500 && err.status !== 408 && err.status !== 429;
  if (!clientError && err.status !== 501) return false;
  const param = (err as { param?: unknown }).param;
  if (typeof param === 'string' && /^stream(_options)?$/i.test(param)) return true;
  const body = err.error as { message?: unknown } | undefined;
  const words = `${typeof body?.message === 'string' ? body.message : ''} ${err.message}`;
  return /\bstream(ing|ed|_options)?\b/i.test(words);
}

async function streamed(res: Response, req: ModelRequest, limit: number): Promise<ModelAnswer> {
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
  let timed: object | undefined;
  const calls: { id: string; name: string; arguments: string }[] = [];
  for await (const data of sseData(res.body, limit)) {
    if (data === '[DONE]') break;
    const chunk = parseChunk(data, res.headers);
    if (chunk.model) model = chunk.model;
    // llama-server's timings (what its KV cache served) may come in the usage chunk or the one before it.
    if ('timings' in chunk) timed = chunk;
    if (chunk.usage) usage = providerUsage(chunk.usage, timed ?? chunk);
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
