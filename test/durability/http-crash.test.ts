/**
 * http_request when its worker is SIGKILLed mid-request, and when its turn is cancelled. Real
 * `harness worker` processes serve the session under the default policy (each request asks and
 * is approved); a loopback server in this process (foreign to the workers: not theirs, allowed
 * by the worker's config) counts what arrives and holds the first request on /hold unanswered,
 * so the kill lands while the request is in flight. A POST is then not sent again: the model
 * reads that it may or may not have taken effect. A GET is sent again (documented: it changes
 * nothing). A cancelled turn closes its request.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, beforeEach, expect, inject, it } from 'vitest';
import { decideApprovals, sendMessage } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { resolveSessionConfig } from '../../config/resolve';
import { adoptHome } from '../../machine/home-mark';
import { cliEnv, writeScript } from '../support/cli';
import { newSessionId, TEST_DATABASE_URL } from '../support/harness';
import { kill, spawnWorker, until } from '../support/processes';

let client: Client;
let home: string;
let env: NodeJS.ProcessEnv;
let configFile: string;
let server: http.Server;
let port: number;
const workers: ChildProcess[] = [];
/** Requests that arrived, as `METHOD /path`. */
let seen: string[];
/** The first request on /hold waits here, unanswered; `closed` says the client went away. */
let held: { closed: boolean } | undefined;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    if (req.url === '/hold' && !held) {
      const entry = { closed: false };
      held = entry;
      res.on('close', () => {
        entry.closed = true;
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`fresh answer ${seen.length}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  home = mkdtempSync(path.join(os.tmpdir(), 'harness-http-crash-'));
  adoptHome(home); // the test's own folder, where it also writes its config and scripts
  configFile = path.join(home, 'harness.config.json');
  // The worker's owner declares the server; the session's config (the same file) names it.
  writeFileSync(configFile, JSON.stringify({ network: { allowPrivateHosts: [`127.0.0.1:${port}`] } }));
  env = cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_TASK_QUEUE: `http-crash-${randomUUID()}`, HARNESS_HOME: home, DATABASE_URL: TEST_DATABASE_URL, HARNESS_CONFIG: configFile });
  client = new Client({ connection: await Connection.connect({ address: inject('temporalAddress') }) });
});

beforeEach(async () => {
  for (const w of workers.splice(0)) await kill(w, 'SIGKILL');
  seen = [];
  held = undefined;
});

afterAll(async () => {
  for (const w of workers) await kill(w, 'SIGKILL');
  await client?.connection.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Starts a turn whose first step is `request`, approves it as a person would, and waits until it reaches the server. */
async function requestInFlight(request: Record<string, unknown>, next: Record<string, unknown>): Promise<{ sessionId: string; turnId: string }> {
  workers.push(await spawnWorker(env));
  const script = writeScript(home, { steps: [{ tool_calls: [{ name: 'http_request', arguments: request }] }, next] });
  const config = resolveSessionConfig({ config: configFile, model: `scripted:${script}` }, {}, home);
  const sessionId = newSessionId('http-crash');
  const { turnId } = await sendMessage(client, { taskQueue: env.HARNESS_TASK_QUEUE!, sessionId, config, text: 'call the service' });
  const asked = await waitForTurn(client, turnId, { pollMs: 200 });
  if (asked.kind !== 'waiting' || asked.state.pending?.kind !== 'approvals') throw new Error(`the request should ask first: ${JSON.stringify(asked)}`);
  expect(asked.state.pending.calls.map((c) => c.tool)).toEqual(['http_request']);
  await decideApprovals(client, sessionId, { approve: true });
  await until('the request to reach the server', () => held);
  return { sessionId, turnId };
}

/** Kills the worker while the request is in flight, starts another, and waits for the turn. */
async function killAndFinish(turnId: string) {
  await kill(workers[0], 'SIGKILL');
  workers.push(await spawnWorker(env));
  const out = await waitForTurn(client, turnId, { pollMs: 200 });
  if (out.kind !== 'done') throw new Error(`the turn should finish: ${JSON.stringify(out)}`);
  return out.result;
}

it('a POST whose worker is killed mid-request is not sent again: the model reads that it may or may not have taken effect', async () => {
  const url = `http://127.0.0.1:${port}/hold`;
  const { turnId } = await requestInFlight(
    { url, method: 'POST', body: '{"amount":5}' },
    { expect: { last_message_contains: 'may or may not have taken effect' }, content: 'I cannot tell whether the payment went through. DONE' },
  );
  const result = await killAndFinish(turnId);
  expect(result.answer).toContain('DONE');
  expect(result.toolCalls.map((c) => [c.name, c.ok, c.error_type])).toEqual([['http_request', false, 'EXECUTION_ERROR']]);
  expect(seen).toEqual(['POST /hold']);
}, 180_000);

it('a GET whose worker is killed mid-request is sent again (GET may repeat) and the model reads the answer', async () => {
  const { turnId } = await requestInFlight(
    { url: `http://127.0.0.1:${port}/hold` },
    { expect: { last_message_contains: 'fresh answer 2' }, content: 'Read it. DONE' },
  );
  const result = await killAndFinish(turnId);
  expect(result.answer).toContain('DONE');
  expect(result.toolCalls.map((c) => [c.name, c.ok])).toEqual([['http_request', true]]);
  expect(seen).toEqual(['GET /hold', 'GET /hold']);
}, 180_000);

it('cancelling the turn aborts its request: the server sees the connection close while the worker lives', async () => {
  // timeout_ms is the longest allowed: the request would otherwise stay open for a minute.
  const { turnId } = await requestInFlight({ url: `http://127.0.0.1:${port}/hold`, timeout_ms: 60_000 }, { content: 'never reached' });
  await client.workflow.getHandle(turnId).cancel();
  // The cancellation reaches the activity with its next heartbeat (every few seconds).
  await until('the request to be aborted', () => held!.closed, 40_000);
  expect(workers[0]!.exitCode).toBeNull();
  expect(seen).toEqual(['GET /hold']);
}, 180_000);
