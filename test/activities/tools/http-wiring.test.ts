import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToolExecutor } from '../../../activities/tools/executor';
import type { SessionConfig } from '../../../common/session';
import type { ChatMessage, ToolResult } from '../../../common/types';
import { newSessionId, scriptedConfig, startHarness, type TestHarness } from '../../support/harness';

// How the worker hands http_request the session's allowance and its own services.
let server: http.Server;
let port: number;
let url: string;
let home: string;

beforeAll(async () => {
  server = http.createServer((_req, res) => res.end('0123456789'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  url = `http://127.0.0.1:${port}/`;
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'harness-http-wiring-'));
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  fs.rmSync(home, { recursive: true, force: true });
});

describe('the executor running http_request', () => {
  it("refuses loopback unless the call carries the session's allowPrivateHosts, and applies the body cap", async () => {
    const ex = createToolExecutor({ home, httpMaxBytes: 4 });
    expect(await ex.execute({ sessionId: 's1', name: 'http_request', args: { url } })).toMatchObject({ ok: false, error_type: 'PERMISSION_DENIED' });
    const r = await ex.execute({ sessionId: 's1', name: 'http_request', args: { url }, allowPrivateHosts: ['127.0.0.1'] });
    expect(r).toMatchObject({ ok: true, result: { body: '0123', truncated: true } });
  });

  it('refuses the worker services it was built with, even for an allowed host', async () => {
    const ex = createToolExecutor({ home, workerServices: [{ host: '127.0.0.1', port, name: 'Temporal server' }] });
    const r = await ex.execute({ sessionId: 's1', name: 'http_request', args: { url }, allowPrivateHosts: ['127.0.0.1'] });
    expect(r).toMatchObject({ ok: false, error_type: 'PERMISSION_DENIED' });
    expect(r.message).toContain(`the worker's own Temporal server on port ${port}`);
  });
});

// The whole path: session config → turn workflow → executeTool activity → executor → http_request.
describe('a worker running http_request for a session', () => {
  let h: TestHarness;
  let uiServer: http.Server;
  let uiPort: number;

  beforeAll(async () => {
    uiServer = http.createServer((_req, res) => res.end('{"executions":["every session"]}'));
    await new Promise<void>((resolve) => uiServer.listen(0, '127.0.0.1', resolve));
    uiPort = (uiServer.address() as AddressInfo).port;
    // This loopback server plays the embedded Temporal Web UI of the worker's environment.
    h = await startHarness({ env: { HARNESS_UI_PORT: String(uiPort) } });
  });

  afterAll(async () => {
    await h?.stop();
    uiServer.closeAllConnections();
    await new Promise((resolve) => uiServer.close(resolve));
  });

  const results = (messages: ChatMessage[]) => messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content) as ToolResult);

  it("reaches a host of the session's network.allowPrivateHosts but never the worker's own Web UI", async () => {
    const config: SessionConfig = {
      ...scriptedConfig({
        steps: [
          { tool_calls: [{ name: 'http_request', arguments: { url } }] },
          { expect: { last_message_contains: '0123456789' }, tool_calls: [{ name: 'http_request', arguments: { url: `http://127.0.0.1:${uiPort}/api/v1/namespaces/default/workflows` } }] },
          { expect: { last_message_contains: 'PERMISSION_DENIED' }, content: 'Refused. HARNESS_OK' },
        ],
      }),
      network: { allowPrivateHosts: ['127.0.0.1'] },
    };
    const r = await h.finish(newSessionId(), config, 'fetch both');
    expect(r.answer).toBe('Refused. HARNESS_OK');
    const [app, ui] = results(r.messages);
    expect(app).toMatchObject({ ok: true, result: { body: '0123456789' } });
    expect(ui).toMatchObject({ ok: false, error_type: 'PERMISSION_DENIED' });
    expect(ui!.message).toContain(`the worker's own Temporal Web UI on port ${uiPort}`);
  });

  it('refuses loopback for a session whose config allows no private host', async () => {
    const r = await h.finish(
      newSessionId(),
      scriptedConfig({
        steps: [
          { tool_calls: [{ name: 'http_request', arguments: { url } }] },
          { expect: { last_message_contains: 'PERMISSION_DENIED' }, content: 'Refused. HARNESS_OK' },
        ],
      }),
      'fetch it',
    );
    expect(r.answer).toBe('Refused. HARNESS_OK');
    expect(results(r.messages)[0]).toMatchObject({ ok: false, error_type: 'PERMISSION_DENIED' });
  });
});
