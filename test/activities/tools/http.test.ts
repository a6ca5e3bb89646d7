import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpRequest, type HttpOptions } from '../../../activities/tools/http';

// Every request in this file goes to this loopback server (or to a closed loopback port), which
// the address guard refuses unless allowed: these tests allow its port and test the rest of the
// tool. The server runs in this process, which here plays a foreign host rather than the worker
// (the worker's own ports are tested in http-guard.test.ts).
let server: http.Server;
let base: string;
const notTheWorkers: HttpOptions['ownPorts'] = () => Promise.resolve(undefined);
const LOCAL: HttpOptions = { allowPrivateHosts: [], ownPorts: notTheWorkers };

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    switch (url.pathname) {
      case '/ok':
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '5', 'x-noise': 'dropped' }).end('hello');
        return;
      case '/missing':
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no such thing"}');
        return;
      case '/big':
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('a'.repeat(3000));
        res.end('b'.repeat(3000));
        return;
      case '/redirect':
        res.writeHead(302, { location: '/ok' }).end();
        return;
      case '/gzip':
        res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' }).end(zlib.gzipSync('z'.repeat(5000)));
        return;
      case '/brotli':
        res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'br' }).end(zlib.brotliCompressSync('unpacked'));
        return;
      case '/headers':
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(req.headers));
        return;
      case '/hang':
        return; // never answers: the client must time out
      case '/trickle':
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('partial'); // headers and some body, then nothing: the timeout must cover the body too
        return;
      case '/echo': {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ method: req.method, token: req.headers['x-token'] ?? null, body: Buffer.concat(chunks).toString() }));
        });
        return;
      }
      default:
        res.writeHead(500).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  base = `http://127.0.0.1:${port}`;
  LOCAL.allowPrivateHosts = [`127.0.0.1:${port}`];
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

describe('httpRequest', () => {
  it('returns status, the useful headers only, and the body of a 200', async () => {
    expect(await httpRequest({ url: `${base}/ok` }, LOCAL)).toEqual({
      ok: true,
      result: { status: 200, status_text: 'OK', headers: { 'content-type': 'text/plain', 'content-length': '5' }, body: 'hello', truncated: false },
    });
  });

  it('reports a 404 as HTTP_ERROR while still returning the response body', async () => {
    const r = await httpRequest({ url: `${base}/missing` }, LOCAL);
    expect(r).toMatchObject({ ok: false, error_type: 'HTTP_ERROR', message: 'HTTP 404 Not Found', recoverable: true });
    expect(r.result).toMatchObject({ status: 404, body: '{"error":"no such thing"}', truncated: false });
  });

  it('caps the body at maxBytes, says it is truncated and states the bytes kept', async () => {
    const r = await httpRequest({ url: `${base}/big` }, { ...LOCAL, maxBytes: 1000 });
    expect(r.ok).toBe(true);
    expect(r.result).toMatchObject({ body: 'a'.repeat(1000), truncated: true });
    expect((r.result as { note: string }).note).toContain('1000 bytes');
  });

  it('reads the whole body when it fits the cap', async () => {
    const r = await httpRequest({ url: `${base}/big` }, { ...LOCAL, maxBytes: 6000 });
    expect(r.result).toMatchObject({ truncated: false });
    expect((r.result as { body: string }).body).toHaveLength(6000);
  });

  it('times out a server that never answers with a message naming the timeout', async () => {
    const r = await httpRequest({ url: `${base}/hang`, timeout_ms: 200 }, LOCAL);
    expect(r).toMatchObject({ ok: false, error_type: 'HTTP_ERROR', recoverable: true });
    expect(r.message).toContain('timed out after 200 ms');
  });

  it('applies the timeout while the body is still streaming', async () => {
    const r = await httpRequest({ url: `${base}/trickle` }, { ...LOCAL, defaultTimeoutMs: 200 });
    expect(r).toMatchObject({ ok: false, error_type: 'HTTP_ERROR' });
    expect(r.message).toContain('timed out after 200 ms');
  });

  it('reports a refused connection as recoverable HTTP_ERROR with the cause', async () => {
    const closed = await closedPort();
    const r = await httpRequest({ url: `http://127.0.0.1:${closed}/` }, { ...LOCAL, allowPrivateHosts: [`127.0.0.1:${closed}`] });
    expect(r).toMatchObject({ ok: false, error_type: 'HTTP_ERROR', recoverable: true });
    expect(r.message).toContain('ECONNREFUSED');
  });

  it('reports a DNS failure as recoverable HTTP_ERROR naming the cause', async () => {
    const resolver = () => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.invalid'), { code: 'ENOTFOUND' }));
    const r = await httpRequest({ url: 'http://nowhere.invalid/' }, { resolver });
    expect(r).toMatchObject({ ok: false, error_type: 'HTTP_ERROR', recoverable: true });
    expect(r.message).toContain('getaddrinfo ENOTFOUND nowhere.invalid');
  });

  it('follows a same-origin redirect', async () => {
    expect((await httpRequest({ url: `${base}/redirect` }, LOCAL)).result).toMatchObject({ status: 200, body: 'hello' });
  });

  it('sends the method, headers and body', async () => {
    const r = await httpRequest({ url: `${base}/echo`, method: 'PUT', headers: { 'x-token': 't1' }, body: 'payload' }, LOCAL);
    expect(JSON.parse((r.result as { body: string }).body)).toEqual({ method: 'PUT', token: 't1', body: 'payload' });
  });

  it('defaults to POST when a body is given without a method', async () => {
    const r = await httpRequest({ url: `${base}/echo`, body: 'x' }, LOCAL);
    expect(JSON.parse((r.result as { body: string }).body)).toMatchObject({ method: 'POST' });
  });

  it('rejects a body on a GET request as INVALID_ARGUMENTS naming body', async () => {
    const r = await httpRequest({ url: `${base}/echo`, method: 'GET', body: 'x' }, LOCAL);
    expect(r).toMatchObject({ ok: false, error_type: 'INVALID_ARGUMENTS' });
    expect(r.message).toMatch(/^body:/);
  });

  it.each(['file:///etc/passwd', 'ftp://127.0.0.1/x'])('refuses the non-http URL %s as INVALID_ARGUMENTS naming url', async (url) => {
    const r = await httpRequest({ url });
    expect(r).toMatchObject({ ok: false, error_type: 'INVALID_ARGUMENTS' });
    expect(r.message).toMatch(/^url:/);
  });

  it('decompresses a gzip body and applies the cap to the decompressed bytes', async () => {
    const r = await httpRequest({ url: `${base}/gzip` }, { ...LOCAL, maxBytes: 1000 });
    expect(r.result).toMatchObject({ body: 'z'.repeat(1000), truncated: true });
  });

  it('decompresses a brotli body', async () => {
    expect((await httpRequest({ url: `${base}/brotli` }, LOCAL)).result).toMatchObject({ body: 'unpacked', truncated: false });
  });

  it('answers a HEAD request with an empty body even when the response claims an encoding', async () => {
    expect(await httpRequest({ url: `${base}/gzip`, method: 'HEAD' }, LOCAL)).toMatchObject({ ok: true, result: { status: 200, body: '' } });
  });

  it('sends the Host and Content-Length of the URL and body, whatever the model sets', async () => {
    const r = await httpRequest({ url: `${base}/headers`, headers: { host: 'internal.example', 'content-length': '1' }, body: 'abc' }, LOCAL);
    expect(JSON.parse((r.result as { body: string }).body)).toMatchObject({ host: base.slice('http://'.length), 'content-length': '3' });
  });

  it.each(['transfer-encoding', 'expect', 'upgrade', 'keep-alive'])('refuses the framing header %s as INVALID_ARGUMENTS naming headers', async (name) => {
    const r = await httpRequest({ url: `${base}/echo`, headers: { [name]: 'x' }, body: 'b' }, LOCAL);
    expect(r).toMatchObject({ ok: false, error_type: 'INVALID_ARGUMENTS' });
    expect(r.message).toBe(`headers: ${name} is managed by the HTTP client and cannot be set`);
  });

  it('refuses credentials in the URL as INVALID_ARGUMENTS naming url', async () => {
    const r = await httpRequest({ url: `http://user:pw@127.0.0.1:1/` }, LOCAL);
    expect(r).toMatchObject({ ok: false, error_type: 'INVALID_ARGUMENTS', suggestion: 'send them in an Authorization header' });
    expect(r.message).toMatch(/^url:/);
  });

  it('rejects an invalid header name as INVALID_ARGUMENTS naming headers', async () => {
    const r = await httpRequest({ url: `${base}/ok`, headers: { 'bad header': 'x' } }, LOCAL);
    expect(r).toMatchObject({ ok: false, error_type: 'INVALID_ARGUMENTS' });
    expect(r.message).toMatch(/^headers:/);
  });
});
