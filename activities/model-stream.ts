/**
 * A chat completion streamed (`stream: true`, usage asked for in the last chunk) and put back
 * together into the same ModelAnswer the plain request gives: text, tool calls by index, a
 * reasoning model's thinking, the finish reason, usage (estimated, and marked, when the server
 * sends none). Each text chunk goes to `onText` as it arrives. An endpoint that refuses to stream
 * is asked again without, and not asked to stream again by this worker.
 */
import type OpenAI from 'openai';
import type { ModelAnswer, ModelRequest } from './model-client';
import type { ToolCall } from '../common/types';
import { estimateUsage, providerUsage } from './model-usage';

type Body = OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;

/** Endpoints (base URL) that refused a streamed request: asked plainly from then on. */
const refused = new Set<string>();

/** Streams when the endpoint takes it, else asks plainly (`plain`). */
export async function streamOrPlain(client: OpenAI, endpoint: string, body: Body, req: ModelRequest, plain: () => Promise<ModelAnswer>): Promise<ModelAnswer> {
  if (!req.onText || refused.has(endpoint)) return plain();
  let chunks = 0;
  try {
    return await streamed(client, body, req, () => chunks++);
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

async function streamed(client: OpenAI, body: Body, req: ModelRequest, onChunk: () => void): Promise<ModelAnswer> {
  const stream = await client.chat.completions.create(
    { ...body, stream: true, stream_options: { include_usage: true } },
    { headers: req.headers, ...(req.signal ? { signal: req.signal } : {}) },
  );
  let content = '';
  let reasoning = '';
  let model = req.model;
  let finishReason: string | undefined;
  let usage: ModelAnswer['usage'] | undefined;
  const calls: { id: string; name: string; arguments: string }[] = [];
  for await (const chunk of stream) {
    onChunk();
    if (chunk.model) model = chunk.model;
    if (chunk.usage) usage = providerUsage(chunk.usage);
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    if (choice.finish_reason) finishReason = choice.finish_reason;
    const delta = choice.delta ?? {};
    if (typeof delta.content === 'string' && delta.content) {
      content += delta.content;
      req.onText!(delta.content);
    }
    const think = (delta as { reasoning_content?: unknown; reasoning?: unknown }).reasoning_content ?? (delta as { reasoning?: unknown }).reasoning;
    if (typeof think === 'string') reasoning += think;
    for (const d of delta.tool_calls ?? []) {
      const c = (calls[d.index] ??= { id: '', name: '', arguments: '' });
      if (d.id) c.id = d.id;
      if (d.function?.name) c.name += d.function.name;
      if (d.function?.arguments) c.arguments += d.function.arguments;
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
