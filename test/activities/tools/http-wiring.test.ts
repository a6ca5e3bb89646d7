import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedModels } from '../../../activities/scripted-models';
import { createToolExecutor } from '../../../activities/tools/executor';
import type { OwnPortLookup } from '../../../activities/tools/own-ports';
import type { SessionConfig } from '../../../deterministic/session-config';
import type { ChatMessage, ToolResult } from '../../../deterministic/types';
import { startForeignServer, type ForeignServer } from '../../support/foreign-server';
import { DEFAULT_POLICY, newSessionId, scriptedConfig, startHarness, type TestHarness } from '../../support/harness';

// How the worker hands http_request the session's allowance and its own services. This server
// runs in the test process, which for the executor tests plays a foreign host, not the worker.
const notTheWorkers: OwnPortLookup = () => Promise.resolve(undefined);
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
    const ex = createToolExecutor({ home, httpMaxBytes: 4, ownPorts: notTheWorkers });
    expect(await ex.execute({ sessionId: 's1', name: 'http_request', args: { url } })).toMatchObject({ ok: false, error_type: 'PERMISSION_DENIED' });
    const r = await ex.execute({ sessionId: 's1', name: 'http_request', args: { url }, allowPrivateHosts: [`127.0.0.1:${port}`] });
    expect(r).toMatchObject({ ok: true, result: { body: '0123', truncated: true } });
  });

  it("refuses the worker's own ports (by default, this process's) even for an allowed host and port", async () => {
    const r = await createToolExecutor({ home }).execute({ sessionId: 's1', name: 'http_request', args: { url }, allowPrivateHosts: [`127.0.0.1:${port}`] });
    expect(r).toMatchObject({ ok: false, error_type: 'PERMISSION_DENIED' });
    expect(r.message).toContain(`(pid ${process.pid}) on port ${port}`);
  });

  it('refuses the worker services it was built with, even for an allowed host', async () => {
    const ex = createToolExecutor({ home, workerServices: [{ host: '127.0.0.1', port, name: 'Temporal server' }], ownPorts: notTheWorkers });
    const r = await ex.execute({ sessionId: 's1', name: 'http_request', args: { url }, allowPrivateHosts: [`127.0.0.1:${port}`] });
    expect(r).toMatchObject({ ok: false, error_type: 'PERMISSION_DENIED' });
    expect(r.message).toContain(`the worker's own Temporal server on port ${port}`);
  });
});

// The whole path: session config → turn workflow → executeTool activity → executor → http_request.
// The in-process worker makes the test process the worker: the app the session may reach runs
// in a foreign process, as a user's app would.
describe('a worker running http_request for a session', () => {
  let h: TestHarness;
  let uiServer: http.Server;
  let uiPort: number;
  let app: ForeignServer;
  let scripted: ScriptedModels;
  let scriptedPort: number;

  beforeAll(async () => {
    uiServer = http.createServer((_req, res) => res.end('{"executions":["every session"]}'));
    await new Promise<void>((resolve) => uiServer.listen(0, '127.0.0.1', resolve));
    uiPort = (uiServer.address() as AddressInfo).port;
    app = await startForeignServer('0123456789');
    // The worker's scripted model server, started now so the session's script can name its port.
    scripted = new ScriptedModels(home);
    await scripted.register('probe', { steps: [{ content: 'x' }] });
    scriptedPort = Number(new URL(await scripted.baseUrl('probe')).port);
    // The loopback uiServer plays the embedded Temporal Web UI of the worker's environment.
    h = await startHarness({ env: { HARNESS_UI_PORT: String(uiPort) }, scripted });
  });

  afterAll(async () => {
    await h?.stop();
    await scripted?.close();
    await app?.stop();
    uiServer.closeAllConnections();
    await new Promise((resolve) => uiServer.close(resolve));
  });

  const results = (messages: ChatMessage[]) => messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content) as ToolResult);

  it("under the default policy, approved, reaches an allowed host:port of the session's network.allowPrivateHosts but never the worker's own Web UI or scripted model", async () => {
    const appUrl = `http://127.0.0.1:${app.port}/`;
    const config: SessionConfig = {
      ...scriptedConfig({
        steps: [
          { tool_calls: [{ name: 'http_request', arguments: { url: appUrl } }] },
          { expect: { last_message_contains: '0123456789' }, tool_calls: [{ name: 'http_request', arguments: { url: `http://127.0.0.1:${uiPort}/api/v1/namespaces/default/workflows` } }] },
          { expect: { last_message_contains: 'PERMISSION_DENIED' }, tool_calls: [{ name: 'http_request', arguments: { url: `http://127.0.0.1:${scriptedPort}/v1/models` } }] },
          { expect: { last_message_contains: 'PERMISSION_DENIED' }, content: 'Refused. HARNESS_OK' },
        ],
      }, {}, DEFAULT_POLICY),
      network: { allowPrivateHosts: [`127.0.0.1:${app.port}`, `127.0.0.1:${uiPort}`, `127.0.0.1:${scriptedPort}`] },
    };
    // Each request asks (network), a person approves each: the allowance and the approval together
    // still never open the worker's own ports.
    const r = await h.finishApproving(newSessionId(), config, 'fetch them');
    expect(r.asked.map((a) => a.split(':')[0])).toEqual(['http_request', 'http_request', 'http_request']);
    expect(r.answer).toBe('Refused. HARNESS_OK');
    const [reached, ui, model] = results(r.messages);
    expect(reached).toMatchObject({ ok: true, result: { body: '0123456789' } });
    expect(ui).toMatchObject({ ok: false, error_type: 'PERMISSION_DENIED' });
    expect(ui!.message).toContain(`the worker's own Temporal Web UI on port ${uiPort}`);
    expect(model).toMatchObject({ ok: false, error_type: 'PERMISSION_DENIED' });
    expect(model!.message).toContain(`the worker's own scripted model server on port ${scriptedPort}`);
  });

  it('refuses loopback for a session whose config allows no private host, even when the person approves the call', async () => {
    const r = await h.finishApproving(
      newSessionId(),
      scriptedConfig({
        steps: [
          { tool_calls: [{ name: 'http_request', arguments: { url: `http://127.0.0.1:${app.port}/` } }] },
          { expect: { last_message_contains: 'PERMISSION_DENIED' }, content: 'Refused. HARNESS_OK' },
        ],
      }),
      'fetch it',
    );
    expect(r.asked).toEqual([`http_request: {"url":"http://127.0.0.1:${app.port}/"}`]);
    expect(r.answer).toBe('Refused. HARNESS_OK');
    expect(results(r.messages)[0]).toMatchObject({ ok: false, error_type: 'PERMISSION_DENIED' });
  });
});
