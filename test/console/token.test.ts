/**
 * The console's access token stays with the console. Cookies are not scoped by port, so a cookie
 * for 127.0.0.1 would go with every request the browser makes to any other web app on 127.0.0.1:
 * here a probe server on another port records every request the browser sends it after the
 * console's printed link was opened (real Chromium, a real worker), and finds no token in any of
 * them. The console goes on working with the token it keeps, and takes no cookie for one.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { HarnessClient } from '../../api/client';
import { startConsole, type ConsoleServer } from '../../console/server';
import { startHarness, TEST_DATABASE_URL, type TestHarness } from '../support/harness';
import { launchBrowser } from '../support/browser';

const TOKEN = 'token-test-token-0123456789abcdef';
let h: TestHarness;
let server: ConsoleServer;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;
let probe: Server;
let probeBase: string;
const seen: { url: string; headers: IncomingHttpHeaders }[] = [];

beforeAll(async () => {
  h = await startHarness();
  const harness = new HarnessClient(h.client, { taskQueue: h.taskQueue });
  server = await startConsole({ harness, home: h.home, env: { DATABASE_URL: TEST_DATABASE_URL }, taskQueue: h.taskQueue, namespace: 'default' }, { host: '127.0.0.1', port: 0, token: TOKEN });
  // Another local web app (the one someone develops on 127.0.0.1:3000, or a hostile one).
  probe = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end(`<!doctype html><title>probe</title><img src="/pixel"><script>fetch('/fetched', { credentials: 'include' })</script>`);
  });
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  probeBase = `http://127.0.0.1:${(probe.address() as { port: number }).port}`;
  browser = await launchBrowser();
  page = await browser.context.newPage();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  probe?.close();
  await server?.close();
  await h?.stop();
});

describe("the console's access token", () => {
  it('reaches no other port of 127.0.0.1 the browser visits after the console was opened', async () => {
    await page.goto(server.url);
    // The page works: its sessions list loaded with the token.
    await page.locator('#sessions-body').waitFor({ state: 'attached', timeout: 20_000 });
    await expect.poll(() => page.locator('#status').innerText(), { timeout: 20_000 }).toMatch(/^updated /);
    await expect.poll(() => page.url()).not.toContain(TOKEN);

    // The other app, in this tab and in another one, loading its own resources.
    await page.goto(`${probeBase}/app`);
    const other = await browser.context.newPage();
    await other.goto(`${probeBase}/other-tab`);
    await expect.poll(() => seen.filter((r) => r.url === '/fetched').length, { timeout: 10_000 }).toBe(2);
    await other.close();

    expect(seen.map((r) => r.url)).toEqual(expect.arrayContaining(['/app', '/fetched', '/other-tab', '/pixel']));
    for (const r of seen) {
      expect(r.headers.cookie, r.url).toBeUndefined();
      expect(JSON.stringify(r), r.url).not.toContain(TOKEN);
    }
    // The browser holds no cookie for the console at all.
    expect(await browser.context.cookies()).toEqual([]);

    // Back in the console's tab, it still has its token.
    await page.goBack();
    await expect.poll(() => page.locator('#status').innerText(), { timeout: 20_000 }).toMatch(/^updated /);
  });

  it('counts a cookie carrying the token for nothing: only the Bearer header opens the API', async () => {
    const api = `${server.base}/api/sessions`;
    expect((await fetch(api, { headers: { Cookie: `harness_console=${TOKEN}` } })).status).toBe(401);
    expect((await fetch(api, { headers: { Authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
  });
});
