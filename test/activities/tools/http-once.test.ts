/**
 * http_request as the worker runs it for a turn: a call that may change something (POST, PUT,
 * PATCH, DELETE) is sent at most once, whatever attempts of its activity run; GET and HEAD are
 * sent again; the activity's cancellation aborts the request. A real loopback server counts
 * what arrives (it runs in this process, which plays a foreign host here, not the worker).
 */
import { mkdtempSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { createToolExecutor, type ToolExecutionRequest } from '../../../activities/tools/executor';
import type { OwnPortLookup } from '../../../activities/tools/own-ports';
import { until } from '../../support/processes';

const notTheWorkers: OwnPortLookup = () => Promise.resolve(undefined);
let server: http.Server;
let port: number;
let home: string;
/** Requests that arrived, as `METHOD /path`. */
let seen: string[];
/** Requests on /hold wait here until the test answers them; `closed` says the client went away first. */
let held: { res: http.ServerResponse; closed: boolean }[];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    if (req.url === '/hold') {
      const entry = { res, closed: false };
      held.push(entry);
      res.on('close', () => {
        if (!res.writableFinished) entry.closed = true;
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`answer ${seen.length}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  home = mkdtempSync(path.join(os.tmpdir(), 'harness-http-once-'));
});

beforeEach(() => {
  seen = [];
  held = [];
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const executor = () => createToolExecutor({ home, ownPorts: notTheWorkers });
let calls = 0;
/** One call of a turn (its own call id), as executeTool passes it; each attempt sends this same request. */
function call(method: string, pathname = '/effect'): ToolExecutionRequest {
  calls++;
  return {
    sessionId: 's-http-once',
    turnId: 's-http-once/turn-1',
    callId: `t1-s${calls}-c0`,
    name: 'http_request',
    args: { url: `http://127.0.0.1:${port}${pathname}`, method, ...(method === 'GET' || method === 'HEAD' ? {} : { body: 'x' }) },
    allowPrivateHosts: [`127.0.0.1:${port}`],
  };
}

it('sends POST, PUT, PATCH and DELETE once: a later attempt of the same call returns the first result', async () => {
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
    const req = call(method);
    const first = await executor().execute(req);
    expect(first).toMatchObject({ ok: true, result: { status: 200 } });
    expect(await executor().execute(req)).toEqual(first);
  }
  expect(seen).toEqual(['POST /effect', 'PUT /effect', 'PATCH /effect', 'DELETE /effect']);
});

it('sends GET and HEAD again on a later attempt (they change nothing)', async () => {
  for (const method of ['GET', 'HEAD']) {
    const req = call(method);
    await executor().execute(req);
    expect(await executor().execute(req)).toMatchObject({ ok: true });
  }
  expect(seen).toEqual(['GET /effect', 'GET /effect', 'HEAD /effect', 'HEAD /effect']);
});

it('does not send a POST whose earlier attempt is still unanswered: it may or may not have taken effect', async () => {
  const req = call('POST', '/hold');
  // The first attempt's request reaches the server and hangs there, as on a worker that is lost.
  const first = executor().execute(req);
  await until('the first request', () => held.length === 1);
  const second = await executor().execute(req);
  expect(second).toMatchObject({ ok: false, error_type: 'EXECUTION_ERROR' });
  expect(second.message).toMatch(
    new RegExp(`^http_request POST http://127\\.0\\.0\\.1:${port}/hold was started before \\(by .* pid ${process.pid}\\) and its worker was lost before it finished; it was not run again, so it may or may not have taken effect$`),
  );
  expect(second.suggestion).toBe('check whether it took effect before calling http_request again');
  // The first attempt was only slow: its answer comes, and the result recorded first stands for both.
  held[0]!.res.end('late');
  expect(await first).toEqual(second);
  expect(seen).toEqual(['POST /hold']);
});

it('aborts the request when its activity is cancelled: the server sees the connection close', async () => {
  const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 10_000, startToCloseTimeoutMs: 95_000 });
  // timeout_ms is the longest allowed: only the cancellation can end the request before the test does.
  const req = { ...call('POST', '/hold'), args: { url: `http://127.0.0.1:${port}/hold`, method: 'POST', body: 'x', timeout_ms: 60_000 } };
  const running = env.run(() => executor().execute(req));
  running.catch(() => undefined);
  await until('the request', () => held.length === 1);
  env.cancel('the turn was cancelled');
  await until('the connection to close', () => held[0]!.closed, 30_000);
  await expect(running).rejects.toBeInstanceOf(CancelledFailure);
  expect(seen).toEqual(['POST /hold']);
});
