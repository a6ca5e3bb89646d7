/**
 * Reading a model endpoint's reply: bounded and in linear time. The body of a plain reply is
 * read up to the worker's limit and parsed once; a streamed one is split into its events by one
 * pass over the bytes. The openai client's own stream reader copies and rescans everything it
 * holds for every network chunk: one 30 MB event took minutes and a gigabyte, and a reply of
 * any size was read whole before anything looked at it. Past the limit the attempt fails at
 * once with MODEL_REPLY_TOO_LARGE, which no retry can fix (the same request gets the same reply).
 */
import { ApplicationFailure } from '@temporalio/common';
import { httpFetch } from './http-fetch';

/**
 * Default largest reply of a model endpoint: far above any honest reply (128k tokens of output
 * are about 512 KiB), and half a megabyte below Temporal's 2 MB payload limit, which a final
 * answer, kept whole in the model activity's result, must pass (a 3 MB answer was refused there,
 * and asked for and paid for again on every attempt).
 */
export const DEFAULT_MODEL_REPLY_MAX_BYTES = 1536 * 1024;

/** The failure type of a reply over the limit. */
const MODEL_REPLY_TOO_LARGE = 'MODEL_REPLY_TOO_LARGE';

/** The limit from the worker's environment (HARNESS_MODEL_REPLY_MAX_BYTES), or the default. */
export function modelReplyLimit(env: Record<string, string | undefined>): number {
  const n = Number(env.HARNESS_MODEL_REPLY_MAX_BYTES);
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_MODEL_REPLY_MAX_BYTES;
}

/** The attempt's failure: one line with the limit and how to change it. */
export function replyTooLarge(limit: number): ApplicationFailure {
  return ApplicationFailure.nonRetryable(
    `the model endpoint's reply is larger than ${sizeText(limit)}, the worker's limit (HARNESS_MODEL_REPLY_MAX_BYTES)`,
    MODEL_REPLY_TOO_LARGE,
  );
}

/**
 * fetch for the openai client (over `base`, http-fetch.ts by default) with the bodies the client
 * reads itself bounded by `limit`: those of refusals and errors, which it reads whole for their
 * message. A successful reply is read by the harness (the client hands it over raw): a plain one
 * by readCapped, a streamed one by sseData, each bounded there, so it is passed on as it came
 * (wrapping it cost every call a second stream and Response).
 */
export function cappedFetch(limit: number, base: typeof fetch = httpFetch()): typeof fetch {
  return async (input, init) => {
    const res = await base(input, init);
    if (!res.body || res.ok) return res;
    let bytes = 0;
    const counted = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, out) {
          bytes += chunk.byteLength;
          if (bytes > limit) out.error(replyTooLarge(limit));
          else out.enqueue(chunk);
        },
      }),
    );
    return new Response(counted, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

/** The whole body as text, refused past `limit` bytes (by its declared length before reading any of it). */
export async function readCapped(res: Response, limit: number): Promise<string> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) {
    await res.body?.cancel().catch(() => undefined);
    throw replyTooLarge(limit);
  }
  if (!res.body) return '';
  const decoder = new TextDecoder();
  const parts: string[] = [];
  let bytes = 0;
  const reader = res.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      if (bytes > limit) throw replyTooLarge(limit);
      parts.push(decoder.decode(value, { stream: true }));
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
  parts.push(decoder.decode());
  return parts.join('');
}

/**
 * The data of each event of a server-sent event stream, in order. Each byte is looked at once:
 * a line being received is kept as its pieces and joined when it ends; a line or an event
 * longer than `limit` bytes fails the read before it is held.
 */
export async function* sseData(body: ReadableStream<Uint8Array> | null, limit: number): AsyncGenerator<string> {
  if (!body) return;
  const decoder = new TextDecoder();
  const reader = body.getReader();
  // The line being received, as its pieces; the data lines of the event being received.
  let pieces: string[] = [];
  let pending = 0;
  let data: string[] = [];
  let dataChars = 0;
  // A line ended by "\r" may be followed by the "\n" of a "\r\n" in the next chunk.
  let afterCr = false;
  const endLine = (): string | undefined => {
    const text = pieces.length === 1 ? pieces[0]! : pieces.join('');
    pieces = [];
    pending = 0;
    if (text === '') {
      const event = data.length ? data.join('\n') : undefined;
      data = [];
      dataChars = 0;
      return event;
    }
    if (!text.startsWith('data:')) return undefined; // comments, event names, ids, retry: nothing the reply needs
    const value = text.charCodeAt(5) === 32 ? text.slice(6) : text.slice(5);
    dataChars += value.length;
    if (dataChars > limit) throw replyTooLarge(limit);
    data.push(value);
    return undefined;
  };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      const text = done ? decoder.decode() : decoder.decode(value, { stream: true });
      let start = afterCr && text.charCodeAt(0) === 10 ? 1 : 0;
      afterCr = false;
      for (let i = start; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (c !== 10 && c !== 13) continue;
        pieces.push(text.slice(start, i));
        const event = endLine();
        if (event !== undefined) yield event;
        if (c === 13) {
          if (i + 1 === text.length) afterCr = true;
          else if (text.charCodeAt(i + 1) === 10) i++;
        }
        start = i + 1;
      }
      if (start < text.length) {
        pieces.push(text.slice(start));
        pending += text.length - start;
        if (pending > limit) throw replyTooLarge(limit);
      }
      if (done) break;
    }
    // The stream ended inside a line or an event: what arrived of it counts.
    if (pieces.length) {
      const event = endLine();
      if (event !== undefined) yield event;
    }
    const event = endLine();
    if (event !== undefined) yield event;
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

/** `4 MiB`, `512 KiB`, `100 bytes`. */
function sizeText(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} bytes`;
}
