/**
 * ModelClient: the one interface the harness needs from a model provider, and its
 * implementation over the official `openai` client for any OpenAI-compatible endpoint.
 */
import OpenAI from 'openai';
import type { ChatMessage, ToolCall, ToolSpec, Usage } from '../common/types';

/** A chat-completions request as the harness makes it. */
export interface ModelRequest {
  model: string;
  messages: ChatMessage[];
  tools: ToolSpec[];
  headers: Record<string, string>;
  signal?: AbortSignal;
}

/** A chat-completions answer reduced to what the loop uses. */
export interface ModelAnswer {
  content: string | null;
  toolCalls: ToolCall[];
  usage: Usage;
  model: string;
}

/** Anything that can answer a chat request. */
export interface ModelClient {
  complete(req: ModelRequest): Promise<ModelAnswer>;
}

/** ModelClient over `openai`; its own retries are off because Temporal owns retries. */
export class OpenAIModelClient implements ModelClient {
  private readonly client: OpenAI;

  constructor(opts: { apiKey: string; baseURL?: string; timeoutMs: number }) {
    this.client = new OpenAI({
      apiKey: opts.apiKey,
      ...(opts.baseURL ? { baseURL: opts.baseURL } : {}),
      maxRetries: 0,
      timeout: opts.timeoutMs,
    });
  }

  async complete(req: ModelRequest): Promise<ModelAnswer> {
    const res = await this.client.chat.completions.create(
      {
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
      },
      { headers: req.headers, ...(req.signal ? { signal: req.signal } : {}) },
    );
    const choice = res.choices?.[0];
    if (!choice) throw new Error('the model returned no choices');
    const msg = choice.message;
    // The provider's ids as given (possibly empty or repeated): the workflow assigns its own.
    const toolCalls: ToolCall[] = (msg.tool_calls ?? [])
      .filter((c) => c.type === 'function')
      .map((c) => ({ id: c.id ?? '', name: c.function.name, arguments: c.function.arguments ?? '' }));
    return {
      content: msg.content ?? null,
      toolCalls,
      usage: {
        prompt_tokens: res.usage?.prompt_tokens ?? 0,
        completion_tokens: res.usage?.completion_tokens ?? 0,
        total_tokens: res.usage?.total_tokens ?? 0,
      },
      model: res.model ?? req.model,
    };
  }
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
