/**
 * The scripted model's HTTP plumbing: reading and parsing a chat request, and answering it as
 * JSON, as an OpenAI-style error body or as a server-sent-events stream. Nothing here knows scripts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/** A JSON object as the server reads and writes it. */
export type Json = Record<string, unknown>;

/** An error answered as an OpenAI-style error body. */
export class HttpError extends Error {
  constructor(readonly status: number, readonly type: string, message: string, readonly code: unknown = null, readonly usage?: unknown) {
    super(message);
  }
}

/** A chat request's body as JSON with a `messages` array; anything else is a 400. */
export function parseBody(raw: string): Json {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    throw new HttpError(400, 'invalid_request_error', 'scripted model: request body is not valid JSON');
  }
  const fields = body !== null && typeof body === 'object' ? (body as Json) : {};
  if (!Array.isArray(fields.messages)) {
    throw new HttpError(400, 'invalid_request_error', 'scripted model: request body must be a JSON object with a "messages" array');
  }
  return fields;
}

/** A request header by name (lower case), its first value when sent more than once. */
export function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The whole request body as text. */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** An OpenAI-style error body; a failed request's usage goes in it, as providers report it. */
export function errorBody(message: string, type: string, code: unknown = null, usage?: unknown): Json {
  return { error: { message, type, code, ...(usage ? { usage } : {}) } };
}

/** Pause between streamed chunks, so a watcher sees the text arrive in pieces. */
const STREAM_CHUNK_MS = 10;

/**
 * A completion as a stream (`stream: true`): the text a few words at a time, the tool calls, the
 * finish reason, then the usage (asked for with stream_options.include_usage), then [DONE].
 */
export async function sendStream(res: ServerResponse, payload: Json, signal: AbortSignal): Promise<void> {
  if (res.destroyed || res.writableEnded) return;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const choice = (payload.choices as Json[])[0]!;
  const message = choice.message as { content: string | null; tool_calls?: Json[] };
  const base = { id: payload.id, object: 'chat.completion.chunk', created: payload.created, model: payload.model };
  const chunk = (delta: Json, finish: unknown = null) => res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
  chunk({ role: 'assistant', content: '' });
  for (const piece of (message.content ?? '').match(/\S+\s*|\s+/g) ?? []) {
    if (signal.aborted) return;
    chunk({ content: piece });
    await sleep(STREAM_CHUNK_MS).catch(() => undefined);
  }
  (message.tool_calls ?? []).forEach((c, index) => chunk({ tool_calls: [{ index, ...c }] }));
  chunk({}, choice.finish_reason);
  res.write(`data: ${JSON.stringify({ ...base, choices: [], usage: payload.usage })}\n\n`);
  res.end('data: [DONE]\n\n');
}

/** Answers with a JSON body, unless the response is already gone (the client left) or sent. */
export function send(res: ServerResponse, status: number, payload: unknown): void {
  if (res.destroyed || res.writableEnded) return;
  const text = JSON.stringify(payload);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
