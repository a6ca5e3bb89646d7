/**
 * The operator console in a real browser (Debian's Chromium through playwright-core) against a
 * real worker under the default policy: the sessions list shows a running scripted session, its
 * steps appear while it runs without a reload, an approval is decided and a question answered in
 * the page, a model's `<script>` is shown as text, and the gate holds (no token: 401; a
 * cross-origin POST, from a test server: 403, or from another site's page in the same browser,
 * which has no token: refused, nothing decided). Screenshots of the three views go to
 * test-output/console/.
 */
import { createServer, get as httpGet, type Server } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { HarnessClient } from '../../api/client';
import { startConsole, type ConsoleServer } from '../../console/server';
import { sendMessage } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { DEFAULT_POLICY, newSessionId, scriptedConfig, startHarness, TEST_DATABASE_URL, type TestHarness } from '../support/harness';
import { launchBrowser, openConsole, SCREENSHOTS } from '../support/browser';

const TOKEN = 'console-test-token-0123456789abcdef';
let h: TestHarness;
let server: ConsoleServer;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;

/** Starts a turn under the default policy without waiting for it; returns its turn id. */
async function start(sessionId: string, steps: unknown[], text = 'a task'): Promise<string> {
  const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config: scriptedConfig({ steps }, {}, DEFAULT_POLICY), text });
  return turnId;
}

/** Waits until the turn stops to wait on a person. */
async function waiting(turnId: string) {
  const out = await waitForTurn(h.client, turnId, { pollMs: 100, timeoutMs: 30_000 });
  expect(out.kind).toBe('waiting');
  return out;
}

beforeAll(async () => {
  h = await startHarness();
  const harness = new HarnessClient(h.client, { taskQueue: h.taskQueue });
  // Its own queue only: these tests are about the views, and the suite's dev server holds every
  // other test's sessions too (the list across queues is session-view.test.ts's).
  server = await startConsole(
    { harness, home: h.home, env: { DATABASE_URL: TEST_DATABASE_URL }, queues: [h.taskQueue], taskQueue: h.taskQueue, namespace: 'default', temporalUi: 'http://127.0.0.1:8233' },
    { host: '127.0.0.1', port: 0, token: TOKEN },
  );
  // The printed link: the page keeps the token from its fragment and takes it out of the address bar.
  ({ browser, page } = await openConsole(server));
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await h?.stop();
});

describe('harness console in a browser', () => {
  it('lists a running session, and its steps appear while it runs, without a reload; a <script> in the answer is text', async () => {
    const sessionId = newSessionId('console-live');
    const slow = { delay_ms: 1_200 };
    const answer = 'Done <script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';
    const turnId = await start(sessionId, [
      { tool_calls: [{ name: 'get_current_time', arguments: {} }] },
      { fault: slow, tool_calls: [{ name: 'get_current_time', arguments: {} }] },
      { fault: slow, tool_calls: [{ name: 'list_files', arguments: {} }] },
      { fault: slow, content: answer },
    ]);
    await page.goto(`${server.base}/#/`);
    const row = page.locator(`tr[data-session="${sessionId}"]`);
    await row.locator('td.state-running').waitFor({ timeout: 20_000 });
    // One queue listed: no queue column (each row's would say the same).
    await page.locator('#queues', { hasText: `task queues: ${h.taskQueue}` }).waitFor({ timeout: 20_000 });
    expect(await page.locator('thead th').allInnerTexts()).not.toContain('queue');
    expect(await row.locator('td.queue').count()).toBe(0);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'sessions.png'), fullPage: true });

    await page.goto(`${server.base}/#/s/${encodeURIComponent(sessionId)}`);
    await page.evaluate(() => ((window as unknown as { __marker: number }).__marker = 1));
    const models = page.locator('[data-type="llm_call"]');
    await models.first().waitFor({ timeout: 20_000 });
    const early = await models.count();
    // Later steps arrive over the live stream, into the same page.
    await page.locator('[data-type="turn"][data-status="ok"]').waitFor({ timeout: 30_000 });
    expect(await models.count()).toBeGreaterThan(early);
    expect(await models.count()).toBe(4);
    // Each model call sits under its step, under the turn, whatever batch of history it came in.
    const nested = '#spans > .span.turn > .children > .span.step > .children > [data-type="llm_call"]';
    expect(await page.locator(nested).count()).toBe(4);
    expect(await page.evaluate(() => (window as unknown as { __marker?: number }).__marker)).toBe(1);
    // The answer is shown as the text it is; nothing in it ran.
    expect(await page.locator('#spans').innerText()).toContain('<script>window.__pwned = 1</script>');
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator('#spans script, #spans img').count()).toBe(0);
    // A step opens to its requests and replies, read from the message store.
    await page.locator('.span.step .line').first().click();
    await page.locator('.span.step .details pre').first().waitFor({ timeout: 20_000 });
    expect(await page.locator('.span.step .details').first().innerText()).toContain('a task');
    await expect(page.locator('#links a').getAttribute('href')).resolves.toContain(encodeURIComponent(sessionId));
    await page.screenshot({ path: path.join(SCREENSHOTS, 'session.png'), fullPage: true });
    const done = await waitForTurn(h.client, turnId, { pollMs: 100, timeoutMs: 30_000 });
    expect(done.kind === 'done' && done.result.answer).toBe(answer);
    // Opened after the turn ended, every span arrives closed in one batch: still nested.
    await page.goto(`${server.base}/#/`);
    await page.goto(`${server.base}/#/s/${encodeURIComponent(sessionId)}`);
    await page.locator('[data-type="turn"][data-status="ok"]').waitFor({ timeout: 30_000 });
    await expect.poll(() => page.locator(nested).count(), { timeout: 10_000 }).toBe(4);
    expect(await page.locator('#spans > .span:not(.turn)').count()).toBe(0);
  });

  it('shows a pending approval in the inbox with what `always` grants; approving it in the page finishes the turn', async () => {
    const sessionId = newSessionId('console-appr');
    const turnId = await start(sessionId, [{ tool_calls: [{ name: 'write_file', arguments: { path: 'note.txt', content: 'from the console' } }] }, { content: 'written' }]);
    await waiting(turnId);
    await page.goto(`${server.base}/#/inbox`);
    const card = page.locator(`.card.approval:has(a[href="#/s/${encodeURIComponent(sessionId)}"])`);
    await card.waitFor({ timeout: 20_000 });
    expect(await card.locator('strong').first().innerText()).toBe('write_file');
    expect(await card.locator('.grant').innerText()).toBe('always grants: every write_file call');
    expect(await card.locator('.args').innerText()).toContain('from the console');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'inbox.png'), fullPage: true });
    await card.locator('button.approve').click();
    await page.locator('#done .ok').waitFor({ timeout: 20_000 });
    const done = await waitForTurn(h.client, turnId, { pollMs: 100, timeoutMs: 30_000 });
    expect(done.kind === 'done' && done.result.terminated_by).toBe('final_answer');
    // The trace says who approved: the page, through the console's client.
    const trace = await new HarnessClient(h.client).trace(turnId);
    expect(trace.spans.find((s) => s.span.type === 'approval')?.span.output).toMatchObject({ approved: true });
  });

  it('answers a pending question from the page', async () => {
    const sessionId = newSessionId('console-ask');
    const turnId = await start(sessionId, [{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }] }, { expect: { last_message_contains: 'teal' }, content: 'teal it is' }]);
    await waiting(turnId);
    await page.goto(`${server.base}/#/inbox`);
    const card = page.locator(`.card.question:has(a[href="#/s/${encodeURIComponent(sessionId)}"])`);
    await card.waitFor({ timeout: 20_000 });
    expect(await card.innerText()).toContain('Which colour?');
    await card.locator('input.answer-text').fill('teal');
    await card.locator('button.answer').click();
    // What the page said of the answer ("answered", or why it failed) before the turn is waited on;
    // the inbox may still show what the test before did.
    const said = page.locator('#done p', { hasText: /^answered/ });
    await said.waitFor({ timeout: 20_000 });
    expect([await said.getAttribute('class'), await said.innerText()]).toEqual(['ok', 'answered']);
    const done = await waitForTurn(h.client, turnId, { pollMs: 100, timeoutMs: 60_000 });
    expect(done.kind === 'done' && done.result.answer).toBe('teal it is');
  });

  it('refuses a request without the token (401) and a cross-origin POST (403), deciding nothing', async () => {
    const sessionId = newSessionId('console-gate');
    const turnId = await start(sessionId, [{ tool_calls: [{ name: 'write_file', arguments: { path: 'x.txt', content: 'x' } }] }, { content: 'x' }]);
    const out = await waiting(turnId);
    const call = out.kind === 'waiting' && out.state.pending?.kind === 'approvals' ? out.state.pending.calls[0]! : undefined;
    const decide = `${server.base}/api/sessions/${encodeURIComponent(sessionId)}/decide`;
    const body = JSON.stringify({ call_id: call?.callId, digest: call?.digest, approve: true });

    for (const p of ['/api/config', '/api/sessions', '/api/inbox', `/api/trace?id=${sessionId}`, `/api/events?id=${sessionId}`]) expect((await fetch(`${server.base}${p}`)).status, p).toBe(401);
    expect((await fetch(`${server.base}/api/sessions`, { headers: { Authorization: 'Bearer wrong-token-0123456789abcdef' } })).status).toBe(401);
    // The page itself is served without the token (it is what reads the token from the link), and holds nothing of a session.
    for (const p of ['/', '/assets/app.js', '/assets/access.js', '/assets/page.js', '/assets/sessions.js']) {
      const res = await fetch(`${server.base}${p}`);
      expect(res.status, p).toBe(200);
      expect(await res.text(), p).not.toContain(sessionId);
    }
    expect((await fetch(decide, { method: 'POST', headers: { 'Content-Type': 'application/json', Origin: server.base }, body })).status).toBe(401);
    const auth = { Authorization: `Bearer ${TOKEN}` };
    expect((await fetch(decide, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json', Origin: 'http://evil.example' }, body })).status).toBe(403);
    expect((await fetch(decide, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body })).status).toBe(403);
    expect((await fetch(decide, { method: 'POST', headers: { ...auth, 'Content-Type': 'text/plain', Origin: server.base }, body })).status).toBe(403);
    // A page of another name resolving to 127.0.0.1 (DNS rebinding) names its own host (fetch cannot set Host: node:http can).
    const rebound = await new Promise<number>((resolve, reject) =>
      httpGet(`${server.base}/api/sessions`, { headers: { ...auth, Host: `rebound.example:${new URL(server.base).port}` } }, (res) => resolve(res.statusCode ?? 0)).on('error', reject),
    );
    expect(rebound).toBe(421);

    // Another site's page in the same browser (which has the console open) posts too.
    const evil: Server = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end(`<form id=f method=POST action="${decide}" enctype="text/plain"><input name='{"a":"' value='"}'></form>
        <script>fetch(${JSON.stringify(decide)}, { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'Content-Type': 'text/plain' }, body: ${JSON.stringify(body)} })
          .finally(() => document.getElementById('f').submit());</script>`);
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', () => resolve()));
    const evilPage = await browser.context.newPage();
    const answers: number[] = [];
    evilPage.on('response', (r) => {
      if (r.url() === decide) answers.push(r.status());
    });
    await evilPage.goto(`http://127.0.0.1:${(evil.address() as { port: number }).port}/`);
    await evilPage.waitForURL(decide, { timeout: 10_000 }).catch(() => undefined);
    await evilPage.close();
    evil.close();
    expect(answers.every((s) => s === 401 || s === 403)).toBe(true);
    // Still waiting: nothing was decided.
    const still = await h.client.workflow.getHandle(turnId).query<{ status: string }>('turnState');
    expect(still.status).toBe('waiting_for_approval');
  });
});
