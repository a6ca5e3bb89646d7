/**
 * Reading a model endpoint's reply (activities/model/body.ts): server-sent events however the
 * bytes are cut, the line endings the format allows, and the worker's limit applied before a
 * line or a body past it is held.
 */
import { describe, expect, it, vi } from 'vitest';
import { cappedFetch, DEFAULT_MODEL_REPLY_MAX_BYTES, modelReplyLimit, readCapped, sseData } from '../../../activities/model/body';

/** A body delivering `text` in the given pieces. */
function body(pieces: string[]): ReadableStream<Uint8Array> {
  const bytes = pieces.map((p) => new TextEncoder().encode(p));
  return new ReadableStream({
    pull(c) {
      const next = bytes.shift();
      if (next) c.enqueue(next);
      else c.close();
    },
  });
}

async function events(pieces: string[], limit = 1 << 20): Promise<string[]> {
  const out: string[] = [];
  for await (const d of sseData(body(pieces), limit)) out.push(d);
  return out;
}

const STREAM = ': keep-alive\r\ndata: {"a":"é😀"}\r\n\r\nevent: x\nid: 2\ndata: one\ndata:two\n\ndata: [DONE]\r\r';

describe('server-sent events of a streamed reply', () => {
  it('gives each event\'s data whatever the byte boundaries, with \\n, \\r\\n and \\r line ends', async () => {
    const whole = await events([STREAM]);
    expect(whole).toEqual(['{"a":"é😀"}', 'one\ntwo', '[DONE]']);
    const bytes = new TextEncoder().encode(STREAM);
    for (let cut = 1; cut < bytes.length; cut++) {
      const split = [bytes.subarray(0, cut), bytes.subarray(cut)];
      const stream = new ReadableStream<Uint8Array>({
        pull(c) {
          const next = split.shift();
          if (next) c.enqueue(next);
          else c.close();
        },
      });
      const out: string[] = [];
      for await (const d of sseData(stream, 1 << 20)) out.push(d);
      expect(out, `cut at byte ${cut}`).toEqual(whole);
    }
  });

  it('gives the last event even when the stream ends without a blank line', async () => {
    expect(await events(['data: a\n\ndata: b'])).toEqual(['a', 'b']);
  });

  it('fails as MODEL_REPLY_TOO_LARGE once a line being received passes the limit, before it ends', async () => {
    const pieces = ['data: ', ...Array.from({ length: 100 }, () => 'x'.repeat(1000))];
    await expect(events(pieces, 10_000)).rejects.toMatchObject({ type: 'MODEL_REPLY_TOO_LARGE', nonRetryable: true });
  });

  it('fails as MODEL_REPLY_TOO_LARGE when one event\'s data lines together pass the limit', async () => {
    const lines = Array.from({ length: 20 }, () => `data: ${'x'.repeat(1000)}\n`);
    await expect(events(lines, 10_000)).rejects.toMatchObject({ type: 'MODEL_REPLY_TOO_LARGE' });
  });
});

describe('a plain reply', () => {
  it('is refused by its declared length before any of it is read', async () => {
    const res = new Response(body(['{}']), { headers: { 'content-length': '5000000' } });
    await expect(readCapped(res, 4_000_000)).rejects.toMatchObject({ type: 'MODEL_REPLY_TOO_LARGE' });
  });

  it('is refused once what arrived passes the limit, and read whole below it', async () => {
    await expect(readCapped(new Response(body(Array.from({ length: 50 }, () => 'y'.repeat(1000)))), 10_000)).rejects.toMatchObject({ type: 'MODEL_REPLY_TOO_LARGE' });
    expect(await readCapped(new Response(body(['{"a":', '"é"}'])), 10_000)).toBe('{"a":"é"}');
  });

  it('has a limit of 1.5 MiB unless the worker sets HARNESS_MODEL_REPLY_MAX_BYTES', () => {
    expect(DEFAULT_MODEL_REPLY_MAX_BYTES).toBe(1536 * 1024);
    expect(modelReplyLimit({})).toBe(DEFAULT_MODEL_REPLY_MAX_BYTES);
    expect(modelReplyLimit({ HARNESS_MODEL_REPLY_MAX_BYTES: '4194304' })).toBe(4 << 20);
    expect(modelReplyLimit({ HARNESS_MODEL_REPLY_MAX_BYTES: 'lots' })).toBe(DEFAULT_MODEL_REPLY_MAX_BYTES);
  });
});

describe("the openai client's fetch", () => {
  /** cappedFetch over a fetch that answers `res`. */
  function answering(res: Response, limit: number) {
    return cappedFetch(limit, vi.fn(async () => res))('http://model.test/v1/chat/completions', { method: 'POST' });
  }

  it('bounds the body of a refusal, which the client reads whole itself', async () => {
    const refused = await answering(new Response(body(Array.from({ length: 50 }, () => 'z'.repeat(1000))), { status: 400 }), 10_000);
    expect(refused.status).toBe(400);
    await expect(refused.text()).rejects.toMatchObject({ type: 'MODEL_REPLY_TOO_LARGE' });
    const small = await answering(new Response(body(['{"error":', '{"message":"no"}}']), { status: 429, headers: { 'retry-after': '3' } }), 10_000);
    expect([small.status, small.headers.get('retry-after'), await small.text()]).toEqual([429, '3', '{"error":{"message":"no"}}']);
  });

  it('passes a successful reply on as it came: the harness reads it, bounded, by readCapped or sseData', async () => {
    for (const type of ['application/json', 'text/event-stream']) {
      const ok = new Response(body(['y'.repeat(50_000)]), { headers: { 'content-type': type } });
      expect(await answering(ok, 10_000)).toBe(ok);
    }
  });
});
