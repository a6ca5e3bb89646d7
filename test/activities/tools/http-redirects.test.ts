import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { httpRequest, MAX_HTTP_REDIRECTS, type HttpOptions } from '../../../activities/tools/http';
import type { Resolver } from '../../../activities/tools/net-guard';

// A loopback server standing for an allowed host; paths describe the redirect each one sends.
// It runs in this process, which here plays that host rather than the worker (the worker's own
// ports are tested in http-guard.test.ts).
let server: http.Server;
let port: number;
let base: string;
let seen: string[] = [];
const notTheWorkers: HttpOptions['ownPorts'] = () => Promise.resolve(undefined);
const LOCAL: HttpOptions = { allowPrivateHosts: [], ownPorts: notTheWorkers };

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    seen.push(`${req.method} ${url.pathname}`);
    const redirect = (status: number, location: string) => res.writeHead(status, { location, 'content-type': 'text/plain' }).end(`see ${location}`);
    const loop = /^\/loop\/(\d+)$/.exec(url.pathname);
    if (loop) return redirect(302, `/loop/${Number(loop[1]) + 1}`);
    switch (url.pathname) {
      case '/relative':
        return redirect(302, '/final');
      case '/absolute':
        return redirect(301, `${base}/final`);
      case '/302':
        return redirect(302, '/echo');
      case '/303':
        return redirect(303, '/echo');
      case '/307':
        return redirect(307, '/echo');
      case '/other-host':
        return redirect(302, `http://localhost:${port}/final`);
      case '/other-port':
        return redirect(302, `http://127.0.0.1:${port + 1}/final`);
      case '/other-scheme':
        return redirect(302, `https://127.0.0.1:${port}/final`);
      case '/metadata':
        return redirect(302, 'http://169.254.169.254/latest/meta-data/iam/security-credentials/');
      case '/no-location':
        return res.writeHead(302).end();
      case '/final':
        return res.writeHead(200, { 'content-type': 'text/plain' }).end('final');
      case '/echo': {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ method: req.method, type: req.headers['content-type'] ?? null, token: req.headers['x-token'] ?? null, body: Buffer.concat(chunks).toString() }));
        });
        return;
      }
      default:
        res.writeHead(500).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  LOCAL.allowPrivateHosts = [`127.0.0.1:${port}`];
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  seen = [];
});

const echoed = (r: { result?: unknown }) => JSON.parse((r.result as { body: string }).body) as Record<string, unknown>;

describe('httpRequest redirects', () => {
  it('follows a same-origin redirect given as a relative or an absolute Location', async () => {
    expect(await httpRequest({ url: `${base}/relative` }, LOCAL)).toMatchObject({ ok: true, result: { status: 200, body: 'final' } });
    expect(await httpRequest({ url: `${base}/absolute` }, LOCAL)).toMatchObject({ ok: true, result: { status: 200, body: 'final' } });
    expect(seen).toEqual(['GET /relative', 'GET /final', 'GET /absolute', 'GET /final']);
  });

  it('turns a POST into a GET without its body on 302 and 303, as fetch does, keeping the other headers', async () => {
    for (const path of ['/302', '/303']) {
      const r = await httpRequest({ url: `${base}${path}`, method: 'POST', headers: { 'x-token': 't', 'content-type': 'application/json' }, body: '{}' }, LOCAL);
      expect(echoed(r)).toEqual({ method: 'GET', type: null, token: 't', body: '' });
    }
  });

  it('keeps the method and body on 307', async () => {
    const r = await httpRequest({ url: `${base}/307`, method: 'PUT', body: 'payload' }, LOCAL);
    expect(echoed(r)).toMatchObject({ method: 'PUT', body: 'payload' });
  });

  it.each([
    ['another host', '/other-host', () => `http://localhost:${port}/final`],
    ['another port', '/other-port', () => `http://127.0.0.1:${port + 1}/final`],
    ['another scheme', '/other-scheme', () => `https://127.0.0.1:${port}/final`],
  ])('returns a redirect to %s unfollowed, telling the model to request the new URL itself', async (_what, path, target) => {
    const r = await httpRequest({ url: `${base}${path}` }, { ...LOCAL, allowPrivateHosts: [`127.0.0.1:${port}`, `localhost:${port}`] });
    expect(r).toMatchObject({ ok: false, error_type: 'HTTP_ERROR', recoverable: true, result: { status: 302, headers: { location: target() } } });
    expect(r.message).toBe(`HTTP 302 Found: redirect to ${target()} not followed: it is on another origin than ${base}`);
    expect(r.suggestion).toBe(`call http_request again with url ${target()} to follow it`);
    expect(seen).toEqual([`GET ${path}`]);
  });

  it('refuses a redirect from an allowed host to the metadata address: not followed, and refused when requested', async () => {
    const r = await httpRequest({ url: `${base}/metadata`, timeout_ms: 2000 }, LOCAL);
    expect(r).toMatchObject({ ok: false, error_type: 'HTTP_ERROR', result: { status: 302 } });
    const target = (r.result as { headers: { location: string } }).headers.location;
    expect(await httpRequest({ url: target, timeout_ms: 2000 }, LOCAL)).toMatchObject({ ok: false, error_type: 'PERMISSION_DENIED' });
  });

  it('checks the address again on every hop, so a same-origin redirect cannot land on a refused address', async () => {
    // The name answers 127.0.0.1 first, then an address that is a worker service on that port.
    const answers = ['127.0.0.1', '10.1.2.3'];
    const resolver: Resolver = (hostname) =>
      hostname === 'app.test' ? Promise.resolve([{ address: answers.shift() ?? '10.1.2.3', family: 4 }]) : Promise.reject(new Error(`unknown ${hostname}`));
    const r = await httpRequest(
      { url: `http://app.test:${port}/relative` },
      { ...LOCAL, resolver, allowPrivateHosts: [`app.test:${port}`], workerServices: [{ host: '10.1.2.3', port, name: 'Temporal server' }] },
    );
    expect(r).toMatchObject({ ok: false, error_type: 'PERMISSION_DENIED' });
    expect(r.message).toBe(`http_request to app.test:${port} refused: app.test resolves to 10.1.2.3, the worker's own Temporal server on port ${port}`);
    expect(seen).toEqual(['GET /relative']);
  });

  it(`stops a chain after ${MAX_HTTP_REDIRECTS} redirects and returns the last one`, async () => {
    const r = await httpRequest({ url: `${base}/loop/0`, timeout_ms: 5000 }, LOCAL);
    expect(r).toMatchObject({ ok: false, error_type: 'HTTP_ERROR', result: { status: 302, headers: { location: '/loop/6' } } });
    expect(r.message).toContain(`stopped after ${MAX_HTTP_REDIRECTS} redirects`);
    expect(seen).toEqual(['/loop/0', '/loop/1', '/loop/2', '/loop/3', '/loop/4', '/loop/5'].map((p) => `GET ${p}`));
  });

  it('hands over a redirect without a Location as it is', async () => {
    expect(await httpRequest({ url: `${base}/no-location` }, LOCAL)).toMatchObject({ ok: false, error_type: 'HTTP_ERROR', message: 'HTTP 302 Found', result: { status: 302 } });
  });
});
