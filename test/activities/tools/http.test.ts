import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpRequest } from '../../../activities/tools/http';

// Every request in this file goes to this loopback server (or to a closed loopback port).
let server: http.Server;
let base: string;

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
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
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
    expect(await httpRequest({ url: `${base}/ok` })).toEqual({
      ok: true,
      result: { status: 200, status_text: 'OK', headers: { 'content-type': 'text/plain', 'content-length': '5' }, body: 'hello', truncated: false },
    });
  });

  it('reports a 404 as HTTP_ERROR while still returning the response body', async () => {
    const r = await httpRequest({ url: `${base}/missing` });
    expect(r).toMatchObject({ ok: false, error_type: 'HTTP_ERROR', message: 'HTTP 404 Not Found', recoverable: true });
    expect(r.result).toMatchObject({ status: 404, body: '{"error":"no such thing"}', truncated: false });
  });

  it('caps the body at maxBytes, says it is truncated and states the bytes kept', async () => {
    const r = await httpRequest({ url: `${base}/big` }, { maxBytes: 1000 });
    expect(r.ok).toBe(true);
    expect(r.result).toMatchObject({ body: 'a'.repeat(1000), truncated: true });
    expect((r.result as { note: string }).note).toContain('1000 bytes');
  });

  it('reads the whole body when it fits the cap', async () => {
    const r = await httpRequest({ url: `${base}/big` }, { maxBytes: 6000 });
    expect(r.result).toMatchObject({ truncated: false });
    expect((r.result as { body: string }).body).toHaveLength(6000);
  });

  it('times out a server that never answers with a message naming the timeout', async () => {
    const r = await httpRequest({ url: `${base}/hang`, timeout_ms: 200 });
    expect(r).toMatchObject({ ok: false, error_type: 'HTTP_ERROR', recoverable: true });
    expect(r.message).toContain('timed out after 200 ms');
  });

  it('applies the timeout while the body is still streaming', async () => {
    const r = await httpRequest({ url: `${base}/trickle` }, { defaultTimeoutMs: 200 });
    expect(r).toMatchObject({ ok: false, error_type: 'HTTP_ERROR' });
    expect(r.message).toContain('timed out after 200 ms');
  });

  it('reports a refused connection as recoverable HTTP_ERROR with the cause', async () => {
    const r = await httpRequest({ url: `http://127.0.0.1:${await closedPort()}/` });
    expect(r).toMatchObject({ ok: false, error_type: 'HTTP_ERROR', recoverable: true });
    expect(r.message).toContain('ECONNREFUSED');
  });

  it('surfaces the underlying cause of a DNS failure instead of "fetch failed"', async () => {
    const dnsFailure: typeof fetch = () =>
      Promise.reject(new TypeError('fetch failed', { cause: Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.invalid'), { code: 'ENOTFOUND' }) }));
    const r = await httpRequest({ url: 'http://nowhere.invalid/' }, { fetch: dnsFailure });
    expect(r).toMatchObject({ ok: false, error_type: 'HTTP_ERROR', recoverable: true });
    expect(r.message).toContain('getaddrinfo ENOTFOUND nowhere.invalid');
  });

  it('follows redirects', async () => {
    expect((await httpRequest({ url: `${base}/redirect` })).result).toMatchObject({ status: 200, body: 'hello' });
  });

  it('sends the method, headers and body', async () => {
    const r = await httpRequest({ url: `${base}/echo`, method: 'PUT', headers: { 'x-token': 't1' }, body: 'payload' });
    expect(JSON.parse((r.result as { body: string }).body)).toEqual({ method: 'PUT', token: 't1', body: 'payload' });
  });

  it('defaults to POST when a body is given without a method', async () => {
    const r = await httpRequest({ url: `${base}/echo`, body: 'x' });
    expect(JSON.parse((r.result as { body: string }).body)).toMatchObject({ method: 'POST' });
  });

  it('rejects a body on a GET request as INVALID_ARGUMENTS naming body', async () => {
    const r = await httpRequest({ url: `${base}/echo`, method: 'GET', body: 'x' });
    expect(r).toMatchObject({ ok: false, error_type: 'INVALID_ARGUMENTS' });
    expect(r.message).toMatch(/^body:/);
  });

  it.each(['file:///etc/passwd', 'ftp://127.0.0.1/x'])('refuses the non-http URL %s as INVALID_ARGUMENTS naming url', async (url) => {
    const r = await httpRequest({ url });
    expect(r).toMatchObject({ ok: false, error_type: 'INVALID_ARGUMENTS' });
    expect(r.message).toMatch(/^url:/);
  });

  it('rejects an invalid header name as INVALID_ARGUMENTS naming headers', async () => {
    const r = await httpRequest({ url: `${base}/ok`, headers: { 'bad header': 'x' } });
    expect(r).toMatchObject({ ok: false, error_type: 'INVALID_ARGUMENTS' });
    expect(r.message).toMatch(/^headers:/);
  });
});
