/**
 * The model requests' fetch over node:http, against real local servers: what the openai client
 * relies on of fetch (status, headers, body, aborts, connection errors), replies read as they
 * arrive and not buffered beyond what is read, kept-alive sockets, and redirects not followed.
 */
import http from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import OpenAI from 'openai';
import { httpFetch } from '../../../activities/model/http-fetch';
import { OpenAIModelClient } from '../../../activities/model/client';
import { toModelFailure } from '../../../activities/model/errors';
import { readCapped } from '../../../activities/model/body';

const servers: (http.Server | https.Server)[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((done) => (s.closeAllConnections(), s.close(() => done())))));
});

/** A server on a free port; counts the connections it accepted. */
async function serve(handler: http.RequestListener): Promise<{ url: string; connections: () => number }> {
  const server = http.createServer(handler);
  let connections = 0;
  server.on('connection', () => connections++);
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections };
}

/** A self-signed certificate for 127.0.0.1 (made once with openssl, valid for a century). */
const tls = { cert: readFileSync(path.join(__dirname, '../../support/tls/localhost-cert.pem')), key: readFileSync(path.join(__dirname, '../../support/tls/localhost-key.pem')) };

/** An https server on a free port with that certificate. */
async function serveTls(handler: http.RequestListener): Promise<string> {
  const server = https.createServer(tls, handler);
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The request's body as the server got it. */
function bodyOf(req: http.IncomingMessage): Promise<string> {
  return new Promise((done) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => done(text));
  });
}

const fetchHere = httpFetch(() => Promise.reject(new Error('the fallback was asked')));

describe('httpFetch', () => {
  it('sends method, headers and body, and answers status, headers and body', async () => {
    const seen: { method?: string; headers?: http.IncomingHttpHeaders; body?: string } = {};
    const { url } = await serve(async (req, res) => {
      Object.assign(seen, { method: req.method, headers: req.headers, body: await bodyOf(req) });
      res.writeHead(201, 'Made', [['content-type', 'application/json'], ['set-cookie', 'a=1'], ['set-cookie', 'b=2']]);
      res.end('{"ok":"ü"}');
    });
    const res = await fetchHere(`${url}/v1/x`, { method: 'POST', headers: new Headers({ authorization: 'Bearer k', 'x-one': '1' }), body: '{"q":"ü"}' });
    expect(seen).toMatchObject({ method: 'POST', body: '{"q":"ü"}', headers: { authorization: 'Bearer k', 'x-one': '1', 'content-length': '10' } });
    expect(seen.headers?.['accept-encoding']).toBeUndefined();
    expect([res.status, res.statusText, res.ok, res.headers.get('content-type'), res.headers.getSetCookie()]).toEqual([201, 'Made', true, 'application/json', ['a=1', 'b=2']]);
    expect(await res.json()).toEqual({ ok: 'ü' });
  });

  it('hands the reply over as it arrives, not when it ends', async () => {
    let finish!: () => void;
    const { url } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
      finish = () => res.end('data: last\n\n');
    });
    const res = await fetchHere(url, { method: 'POST', body: '{}' });
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: first\n\n');
    finish();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: last\n\n');
    expect((await reader.read()).done).toBe(true);
  });

  it('does not read a large reply further than its reader: the limit stops it, and the socket is closed', async () => {
    let sent = 0;
    let closed = false;
    const { url } = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 'y');
      const more = () => {
        while (sent < 64 * 1024 * 1024 && res.write(chunk)) sent += chunk.length;
        if (sent < 64 * 1024 * 1024) res.once('drain', more);
      };
      req.socket.on('close', () => (closed = true));
      more();
    });
    const res = await fetchHere(url, { method: 'POST', body: '{}' });
    await expect(readCapped(res, 1024 * 1024)).rejects.toMatchObject({ type: 'MODEL_REPLY_TOO_LARGE' });
    await vi.waitFor(() => expect(closed).toBe(true));
    // Far less than the 64 MB the server had to send: what the sockets' buffers took, and the megabyte read.
    expect(sent).toBeLessThan(32 * 1024 * 1024);
  });

  it('fails the body of a reply whose connection drops before its end, as undici does', async () => {
    const { url } = await serve((req, res) => {
      res.writeHead(200);
      res.write('part');
      setTimeout(() => req.socket.destroy(), 20);
    });
    const reader = (await fetchHere(url, { method: 'POST', body: '{}' })).body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('part');
    await expect(reader.read()).rejects.toMatchObject({ name: 'TypeError', message: 'terminated' });
  });

  it('keeps the socket for the next request', async () => {
    const server = await serve((_req, res) => res.end('ok'));
    for (let i = 0; i < 3; i++) expect(await (await fetchHere(server.url, { method: 'POST', body: '{}' })).text()).toBe('ok');
    expect(server.connections()).toBe(1);
  });

  it('rejects with an AbortError when aborted before the reply, and while its body is read', async () => {
    let closed = 0;
    const { url } = await serve((req, res) => {
      req.socket.on('close', () => closed++);
      if (req.url === '/body') {
        res.writeHead(200);
        res.write('part');
      }
    });
    const early = new AbortController();
    const pending = fetchHere(url, { method: 'POST', body: '{}', signal: early.signal });
    setTimeout(() => early.abort(), 50);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    const late = new AbortController();
    const res = await fetchHere(`${url}/body`, { method: 'POST', body: '{}', signal: late.signal });
    const reader = res.body!.getReader();
    await reader.read();
    late.abort();
    await expect(reader.read()).rejects.toMatchObject({ name: 'AbortError' });
    await vi.waitFor(() => expect(closed).toBe(2));
    const already = new AbortController();
    already.abort();
    await expect(fetchHere(url, { signal: already.signal })).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('returns a redirect instead of following it: the request and its key go nowhere undeclared', async () => {
    let hit = false;
    const elsewhere = await serve((_req, res) => ((hit = true), res.end('{}')));
    const { url } = await serve((_req, res) => {
      res.writeHead(307, { location: `${elsewhere.url}/v1/chat/completions` });
      res.end();
    });
    const res = await fetchHere(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer secret' }, body: '{}' });
    expect([res.status, res.headers.get('location')]).toEqual([307, `${elsewhere.url}/v1/chat/completions`]);
    // Through the openai client: a failure that names where the endpoint points, not retried.
    const client = new OpenAIModelClient({ apiKey: 'secret', baseURL: `${url}/v1`, timeoutMs: 5_000 });
    const err = await client.complete({ model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: [] }).catch((e: unknown) => e);
    expect(toModelFailure(err, url)).toMatchObject({ type: 'MODEL_REQUEST_REJECTED', nonRetryable: true, message: expect.stringContaining(`redirects (HTTP 307) to ${elsewhere.url}/v1/chat/completions; redirects are not followed`) });
    expect(hit).toBe(false);
  });

  it('speaks https, and checks the certificate: one nobody vouched for is refused before anything is sent', async () => {
    let got: string | undefined;
    const url = await serveTls(async (req, res) => {
      got = await bodyOf(req);
      res.end('{"over":"tls"}');
    });
    await expect(fetchHere(url, { method: 'POST', body: '{"secret":1}' })).rejects.toMatchObject({ message: 'fetch failed', cause: { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' } });
    expect(got).toBeUndefined();
    const trusting = { 'http:': new http.Agent(), 'https:': new https.Agent({ ca: tls.cert }) };
    const res = await httpFetch(() => Promise.reject(new Error('the fallback was asked')), trusting)(url, { method: 'POST', body: '{"secret":1}' });
    expect([got, await res.json()]).toEqual(['{"secret":1}', { over: 'tls' }]);
  });

  it('answers a status without a body with none', async () => {
    const { url } = await serve((_req, res) => (res.writeHead(204), res.end()));
    const res = await fetchHere(url, { method: 'POST', body: '{}' });
    expect([res.status, res.body]).toEqual([204, null]);
  });

  it('leaves other URLs and bodies to the fallback', async () => {
    const fallback = vi.fn(async () => new Response('fallback'));
    const f = httpFetch(fallback);
    await f('data:text/plain,x');
    await f('http://127.0.0.1:1/', { method: 'POST', body: new Blob(['x']) });
    await f(new Request('http://127.0.0.1:1/'));
    expect(fallback).toHaveBeenCalledTimes(3);
  });

  it('fails a refused connection as the openai client and the harness expect: MODEL_UNREACHABLE, retryable', async () => {
    const closed = await serve(() => undefined);
    servers.pop()!.close();
    await expect(fetchHere(closed.url, { method: 'POST', body: '{}' })).rejects.toMatchObject({ name: 'TypeError', message: 'fetch failed', cause: { code: 'ECONNREFUSED' } });
    const client = new OpenAIModelClient({ apiKey: 'k', baseURL: `${closed.url}/v1`, timeoutMs: 5_000 });
    const err = await client.complete({ model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: [] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIConnectionError);
    expect(toModelFailure(err, closed.url)).toMatchObject({ type: 'MODEL_UNREACHABLE', nonRetryable: false });
  });

  it('carries a whole chat completion through the openai client', async () => {
    let encoding: string | undefined = 'unseen';
    const { url } = await serve(async (req, res) => {
      // undici asks for compressed replies; this fetch does not: the request went through it.
      encoding = req.headers['accept-encoding'];
      const body = JSON.parse(await bodyOf(req)) as { model: string };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'c', model: body.model, choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } }));
    });
    const client = new OpenAIModelClient({ apiKey: 'k', baseURL: `${url}/v1`, timeoutMs: 5_000 });
    const answer = await client.complete({ model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: [] });
    expect(answer).toMatchObject({ content: 'hello', model: 'm', usage: { prompt_tokens: 3, completion_tokens: 1 } });
    expect(encoding).toBeUndefined();
  });
});
