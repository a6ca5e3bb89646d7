/**
 * ModelClient: the one interface the harness needs from a model provider, and its
 * implementation over the official `openai` client for any OpenAI-compatible endpoint.
 */
import OpenAI from 'openai';
import type { ChatMessage, ToolCall, ToolSpec, Usage } from '../../deterministic/types';
import { estimateUsage, providerUsage } from './usage';
import { streamOrPlain } from './stream';
import { cappedFetch, DEFAULT_MODEL_REPLY_MAX_BYTES, readCapped } from './body';
import { DEFAULT_MODEL_ENDPOINT } from './keys';

/** A chat-completions request as the harness makes it. */
export interface ModelRequest {
  model: string;
  messages: ChatMessage[];
  tools: ToolSpec[];
  headers: Record<string, string>;
  signal?: AbortSignal;
  /** The reply cap (limits.maxOutputTokens), sent under the name the provider reads. */
  maxOutputTokens?: number;
  /** A JSON-schema constraint on the reply (text mode, where the endpoint takes one). */
  responseFormat?: Record<string, unknown>;
  /** Groups the requests that share a prefix (the session): sent as `prompt_cache_key` where the provider reads it. */
  cacheKey?: string;
  /** Stream the reply, giving each piece of its text here as it arrives (stream-writer.ts stores it for readers). */
  onText?: (chunk: string) => void;
}

/** A chat-completions answer reduced to what the loop uses. */
export interface ModelAnswer {
  content: string | null;
  toolCalls: ToolCall[];
  usage: Usage;
  model: string;
  /** Why the provider stopped (`length`: the reply was cut at the cap). */
  finishReason?: string;
  /** A reasoning model's thinking (`reasoning_content` / `reasoning`): kept for the trace, never sent back. */
  reasoning?: string;
  /** The provider sent no usage: the counts are the tokenizer's estimate. */
  usageEstimated?: boolean;
}

/** Anything that can answer a chat request. */
export interface ModelClient {
  complete(req: ModelRequest): Promise<ModelAnswer>;
}

/** ModelClient over `openai`; its own retries are off because Temporal owns retries. */
export class OpenAIModelClient implements ModelClient {
  private readonly client: OpenAI;
  private readonly capParam: 'max_tokens' | 'max_completion_tokens';
  private readonly sendsCacheKey: boolean;
  private readonly endpoint: string;
  private readonly maxReplyBytes: number;

  /** `maxReplyBytes`: a larger reply fails its attempt as MODEL_REPLY_TOO_LARGE (model-body.ts). */
  constructor(opts: { apiKey: string; baseURL?: string; timeoutMs: number; maxReplyBytes?: number }) {
    this.capParam = capParameter(opts.baseURL);
    this.sendsCacheKey = readsCacheKey(opts.baseURL);
    this.endpoint = opts.baseURL ?? DEFAULT_MODEL_ENDPOINT;
    this.maxReplyBytes = opts.maxReplyBytes ?? DEFAULT_MODEL_REPLY_MAX_BYTES;
    this.client = new OpenAI({
      apiKey: opts.apiKey,
      ...(opts.baseURL ? { baseURL: opts.baseURL } : {}),
      maxRetries: 0,
      timeout: opts.timeoutMs,
      fetch: cappedFetch(this.maxReplyBytes),
    });
  }

  async complete(req: ModelRequest): Promise<ModelAnswer> {
    const body = {
      model: req.model,
      messages: toOpenAIMessages(req.messages),
      ...(req.tools.length
        ? {
            tools: req.tools.map((t) => ({
              type: 'function' as const,
              function: { name: t.name, description: t.description, parameters: t.parameters },
            })),
          }
        : {}),
      ...(req.maxOutputTokens ? { [this.capParam]: req.maxOutputTokens } : {}),
      ...(req.responseFormat ? { response_format: req.responseFormat as never } : {}),
      ...(req.cacheKey && this.sendsCacheKey ? { prompt_cache_key: req.cacheKey } : {}),
    };
    return streamOrPlain(this.client, this.endpoint, body, req, () => this.plain(body, req), (res) => this.answer(res, req), this.maxReplyBytes);
  }

  private async plain(body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming, req: ModelRequest): Promise<ModelAnswer> {
    // The raw response (the client still checks its status), read up to the limit and parsed once.
    const raw = await this.client.chat.completions.create(body, { headers: req.headers, ...(req.signal ? { signal: req.signal } : {}) }).asResponse();
    return this.answer(raw, req);
  }

  /** A whole (JSON) reply as the loop uses it. */
  private async answer(raw: Response, req: ModelRequest): Promise<ModelAnswer> {
    const res = parseReply(await readCapped(raw, this.maxReplyBytes));
    const choice = res.choices?.[0];
    if (!choice) throw new Error('the model returned no choices');
    const msg = choice.message ?? ({} as Partial<typeof choice.message>);
    // The provider's ids as given (possibly empty or repeated): the workflow assigns its own.
    const toolCalls: ToolCall[] = (msg.tool_calls ?? [])
      .filter((c) => c.type === 'function' || (c.type === undefined && 'function' in c))
      .map((c) => {
        const fn = (c as { function: { name: string; arguments?: string } }).function;
        return { id: c.id ?? '', name: fn.name, arguments: fn.arguments ?? '' };
      });
    const content = msg.content ?? null;
    const reasoning = reasoningOf(msg);
    // Some servers (older llama.cpp, proxies) send no usage: estimated, and marked so.
    const usage = res.usage ? providerUsage(res.usage, res) : undefined;
    return {
      content,
      toolCalls,
      usage: usage ?? estimateUsage(req, content, toolCalls),
      model: res.model ?? req.model,
      ...(choice.finish_reason ? { finishReason: choice.finish_reason } : {}),
      ...(reasoning ? { reasoning } : {}),
      ...(usage ? {} : { usageEstimated: true }),
    };
  }
}

/** A plain reply's JSON; anything else is said in a few words (the body itself may be anything). */
function parseReply(text: string): OpenAI.Chat.ChatCompletion {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`the model endpoint's reply is not JSON (${text.length} characters)`);
  }
  if (!value || typeof value !== 'object') throw new Error('the model returned no choices');
  return value as OpenAI.Chat.ChatCompletion;
}

/**
 * OpenAI's own API reads `max_completion_tokens` (its reasoning models refuse `max_tokens`);
 * llama.cpp, vLLM, Ollama, DeepSeek and other compatible servers read `max_tokens` (llama.cpp
 * ignores the newer name, so a babbling model would run on).
 */
export function capParameter(baseURL: string | undefined): 'max_tokens' | 'max_completion_tokens' {
  try {
    return new URL(baseURL ?? DEFAULT_MODEL_ENDPOINT).hostname.toLowerCase() === 'api.openai.com' ? 'max_completion_tokens' : 'max_tokens';
  } catch {
    return 'max_tokens';
  }
}

/**
 * Whether the endpoint reads `prompt_cache_key` (requests with the same key go to the same cache):
 * OpenAI's own API. Other compatible servers may refuse a field they do not know; DeepSeek and
 * llama-server cache a repeated prefix without one.
 */
export function readsCacheKey(baseURL: string | undefined): boolean {
  return capParameter(baseURL) === 'max_completion_tokens';
}

/** A reasoning model's thinking, under either name providers use. */
function reasoningOf(msg: object): string | undefined {
  const m = msg as { reasoning_content?: unknown; reasoning?: unknown };
  const r = typeof m.reasoning_content === 'string' ? m.reasoning_content : typeof m.reasoning === 'string' ? m.reasoning : undefined;
  return r && r.trim() !== '' ? r : undefined;
}

/**
 * The conversation in the provider's terms: each tool call carries the id the provider gave it
 * (the harness's own id when it gave none), and each tool result the id of its call.
 */
export function toOpenAIMessages(messages: ChatMessage[]): OpenAI.Chat.ChatCompletionMessageParam[] {
  const providerIds = new Map<string, string>();
  return messages.map((m): OpenAI.Chat.ChatCompletionMessageParam => {
    if (m.role === 'assistant') {
      const calls = (m.tool_calls ?? []).map((c) => {
        const id = c.providerId || c.id;
        providerIds.set(c.id, id);
        return { id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } };
      });
      return { role: 'assistant', content: m.content, ...(calls.length ? { tool_calls: calls } : {}) };
    }
    if (m.role === 'tool') return { role: 'tool', tool_call_id: providerIds.get(m.tool_call_id) ?? m.tool_call_id, content: m.content };
    return m;
  });
}
