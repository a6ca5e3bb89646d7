/** Reading an http_request response: the body decoded as fetch would, capped as it streams in. */
import type * as http from 'node:http';
import { pipeline, type Readable } from 'node:stream';
import * as zlib from 'node:zlib';
import { utf8Prefix } from './files';

/** Reads at most maxBytes (+1 to detect overflow) of the decoded body, then stops the download. */
export async function readCapped(response: http.IncomingMessage, maxBytes: number, method: string): Promise<{ body: string; bytes: number; truncated: boolean }> {
  const status = response.statusCode ?? 0;
  if (method === 'HEAD' || status === 204 || status === 304) {
    response.destroy();
    return { body: '', bytes: 0, truncated: false };
  }
  const stream = decoded(response);
  const chunks: Buffer[] = [];
  let total = 0;
  // Leaving the loop early destroys the stream (and the socket): the rest would be thrown away anyway.
  for await (const chunk of stream) {
    chunks.push(chunk as Buffer);
    total += (chunk as Buffer).length;
    if (total > maxBytes) break;
  }
  const kept = utf8Prefix(Buffer.concat(chunks), maxBytes);
  return { body: kept.toString('utf8'), bytes: kept.length, truncated: total > maxBytes };
}

/** The body decompressed as fetch would (gzip, deflate, br); the cap then counts decoded bytes. */
function decoded(response: http.IncomingMessage): Readable {
  // Lenient flushing, as undici does: a body cut short still yields what arrived.
  const lenient = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
  const encoding = (response.headers['content-encoding'] ?? '').trim().toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? zlib.createGunzip(lenient)
      : encoding === 'deflate'
        ? zlib.createInflate(lenient)
        : encoding === 'br'
          ? zlib.createBrotliDecompress({ flush: zlib.constants.BROTLI_OPERATION_FLUSH, finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH })
          : undefined;
  return decoder ? pipeline(response, decoder, () => undefined) : response;
}
