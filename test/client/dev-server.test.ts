/**
 * The embedded Temporal dev server, started as `harness dev` and the background deployment start
 * it (spawnDevServer with the default arguments), against a real browser (Debian's Chromium) on
 * pages of other origins:
 * - a page on another port of 127.0.0.1 posts `text/plain` (a "simple" request: no CORS
 *   preflight) to start a session, by fetch and by form, to the HTTP API, to the Web UI's API
 *   and to the gRPC port;
 * - a page whose name resolves to 127.0.0.1 (`*.localhost`, as a DNS-rebinding name does once
 *   rebound) reads the workflow list same-origin from the HTTP API's port and the UI's port.
 * Afterwards the Temporal client finds nothing started, and the pages read nothing.
 */
import { createServer, type Server } from 'node:http';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { devServerArgs, spawnDevServer, waitForServer } from '../../client/dev-server';
import { embeddedFiles } from '../../machine/paths';
import { temporalSettings, type TemporalSettings } from '../../client/temporal-settings';
import { freePort } from '../../scripts/free-port';
import { removeTempDirs, tempDir } from '../support/cli';
import { launchBrowser } from '../support/browser';

describe('devServerArgs', () => {
  const s = temporalSettings({ HARNESS_EMBEDDED_PORT: '9000' });

  it('starts no Web UI unless asked, and then on the UI port', () => {
    expect(devServerArgs(s, '/h')).toContain('--headless');
    expect(devServerArgs(s, '/h')).not.toContain('--ui-port');
    const ui = devServerArgs(s, '/h', { ui: true });
    expect(ui).not.toContain('--headless');
    expect(ui[ui.indexOf('--ui-port') + 1]).toBe(String(s.uiPort));
  });

  it('admits no Host header to the HTTP API, whatever it says', () => {
    const args = devServerArgs(s, '/h');
    const value = args[args.findIndex((a, i) => a === '--dynamic-config-value' && args[i + 1]!.startsWith('frontend.httpAllowedHosts=')) + 1]!;
    const patterns = JSON.parse(value.slice(value.indexOf('=') + 1)) as string[];
    // A space is in no valid Host (the server answers 400 to one), and there is no wildcard.
    expect(patterns.length).toBeGreaterThan(0);
    for (const p of patterns) {
      expect(p).toMatch(/ /);
      expect(p).not.toContain('*');
    }
  });
});

describe('the embedded dev server and a browser page of another origin', () => {
  let settings: TemporalSettings;
  let server: ChildProcess;
  let connection: Connection;
  let client: Client;
  let evil: Server;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  /** A session that exists: what a reading page would find. */
  const secret = `secret-session-${randomUUID()}`;

  beforeAll(async () => {
    const home = tempDir('harness-devserver-browser-');
    const ports = new Set<number>();
    while (ports.size < 4) ports.add(await freePort());
    const [grpc, ui, http, metrics] = [...ports].map(String);
    settings = temporalSettings({ HARNESS_EMBEDDED_PORT: grpc!, HARNESS_UI_PORT: ui!, HARNESS_HTTP_PORT: http!, HARNESS_METRICS_PORT: metrics! });
    server = spawnDevServer(settings, home, { detached: false, logToFile: true });
    await waitForServer(settings, embeddedFiles(home).serverLog, 90_000, server);
    connection = await Connection.connect({ address: settings.address });
    client = new Client({ connection, namespace: settings.namespace });
    await client.workflow.start('sessionWorkflow', { taskQueue: `nobody-polls-${randomUUID()}`, workflowId: secret, args: [] });
    browser = await launchBrowser();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    evil?.close();
    await connection?.close();
    server?.kill('SIGKILL');
    removeTempDirs();
  });

  it('starts no workflow for a page that posts text/plain to its HTTP API, its UI or its gRPC port', async () => {
    const attempts = ['http-fetch', 'http-form', 'ui-fetch', 'grpc-fetch'].map((how) => `attack-${how}-${randomUUID()}`);
    const [httpFetch, httpForm, uiFetch, grpcFetch] = attempts as [string, string, string, string];
    const start = (id: string) => JSON.stringify({ workflowId: id, workflowType: { name: 'sessionWorkflow' }, taskQueue: { name: 'harness' }, identity: 'a page' });
    const api = (port: number, id: string) => `http://127.0.0.1:${port}/api/v1/namespaces/${settings.namespace}/workflows/${id}`;
    const posts = [
      [api(settings.httpPort, httpFetch), start(httpFetch)],
      [api(settings.uiPort, uiFetch), start(uiFetch)],
      [`http://127.0.0.1:${settings.embeddedPort}/temporal.api.workflowservice.v1.WorkflowService/StartWorkflowExecution`, start(grpcFetch)],
    ];
    // A text/plain form posts `name=value`: the name carries the JSON up to a string the value closes.
    const formName = JSON.stringify({ ...(JSON.parse(start(httpForm)) as object), identity: '' }).slice(0, -2);
    evil = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end(`<!doctype html><iframe name="sink"></iframe>
        <form id="f" method="POST" target="sink" enctype="text/plain" action="${api(settings.httpPort, httpForm)}"><input name='${formName}' value='"}'></form>
        <script>
          const posts = ${JSON.stringify(posts)};
          Promise.allSettled(posts.map(([url, body]) => fetch(url, { method: 'POST', mode: 'no-cors', headers: { 'Content-Type': 'text/plain' }, body })))
            .then((r) => {
              window.__fetched = r.length;
              document.querySelector('iframe').onload = () => (window.__formed = true);
              document.getElementById('f').submit();
            });
        </script>`);
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', () => resolve()));
    const page = await browser.context.newPage();
    await page.goto(`http://127.0.0.1:${(evil.address() as { port: number }).port}/`);
    await page.waitForFunction(() => (window as unknown as { __formed?: boolean }).__formed === true, undefined, { timeout: 30_000 });
    expect(await page.evaluate(() => (window as unknown as { __fetched?: number }).__fetched)).toBe(posts.length);
    await page.close();

    for (const id of attempts) {
      const found = await client.workflow
        .getHandle(id)
        .describe()
        .then(() => 'started')
        .catch((err: unknown) => (err instanceof WorkflowNotFoundError ? 'not found' : String(err)));
      expect(found, id).toBe('not found');
    }
    const listed: string[] = [];
    for await (const w of client.workflow.list()) listed.push(w.workflowId);
    expect(listed).toEqual([secret]);
  });

  it('lets a page whose name resolves to 127.0.0.1 read nothing from its HTTP API port or its UI port', async () => {
    for (const port of [settings.httpPort, settings.uiPort]) {
      const origin = `http://rebound.localhost:${port}`;
      // The rebinding page as its site served it before the name pointed here; its requests then go to the port.
      await browser.context.route(`${origin}/attack`, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>attack</title>' }));
      const page = await browser.context.newPage();
      await page.goto(`${origin}/attack`);
      const read = await page.evaluate(async (ns) => {
        try {
          const r = await fetch(`/api/v1/namespaces/${ns}/workflows`);
          return `${r.status} ${await r.text()}`;
        } catch (err) {
          return `failed: ${String(err)}`;
        }
      }, settings.namespace);
      await page.close();
      expect(read, `port ${port}`).not.toContain(secret);
      // The HTTP API refuses the Host; nothing listens on the UI's port.
      expect(read, `port ${port}`).toMatch(port === settings.httpPort ? /^403 .*Host not allowed/ : /^failed: /);
    }
  });
});
