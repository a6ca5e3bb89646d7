/**
 * The console shows a running turn's model text as it streams, from the turn's typed events
 * (HarnessClient.events, through /api/turn-events): a real worker stores the text in the
 * database, the console (its own client) reads it, and Chromium draws it under the turn's line
 * while the turn still runs; the box goes once the turn ends and its spans show the whole reply.
 * The stream carries every text escaped as the rest of the page's values (a reply's `<script>`
 * and bidi controls are shown, never run or applied); a bad id is refused and an unknown turn
 * ends the stream with `unknown`. Its Schedules view lists the harness's schedules with their next
 * firing (a paused one says so), their values drawn as text. A message sent from the session view
 * reaches the running turn at its next step, as `harness send` does; bad sends get one-line errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { HarnessClient } from '../../api/client';
import { startConsole, type ConsoleServer } from '../../console/server';
import { sendMessage } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { newSessionId, scriptedConfig, startHarness, TEST_DATABASE_URL, type TestHarness } from '../support/harness';
import { launchBrowser, openConsole } from '../support/browser';

const TOKEN = 'console-streamed-text-token-0123456789';
// The scripted model streams a word every 10 ms: about 3 s of text.
const ANSWER = `Streaming into the console: ${Array.from({ length: 300 }, (_, i) => `word${i}`).join(' ')}. DONE`;
let h: TestHarness;
let server: ConsoleServer;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;

const get = (p: string, token = TOKEN) => fetch(`${server.base}${p}`, { headers: token ? { Authorization: `Bearer ${token}` } : {} });

/** The SSE stream's events: [event name, parsed data]. */
async function sse(p: string): Promise<Array<[string, Record<string, unknown>]>> {
  const res = await get(p);
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  const out: Array<[string, Record<string, unknown>]> = [];
  for (const block of (await res.text()).split('\n\n')) {
    const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
    const data = /^data: (.*)$/m.exec(block)?.[1];
    if (data !== undefined) out.push([event, JSON.parse(data) as Record<string, unknown>]);
  }
  return out;
}

async function start(steps: unknown[]): Promise<{ sessionId: string; turnId: string }> {
  const sessionId = newSessionId('console-text');
  const config = scriptedConfig({ steps });
  h.declareUsed(config);
  const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config, text: 'write at length' });
  return { sessionId, turnId };
}

beforeAll(async () => {
  h = await startHarness({ streamText: true });
  const env = { DATABASE_URL: TEST_DATABASE_URL };
  const harness = new HarnessClient(h.client, { taskQueue: h.taskQueue, env });
  server = await startConsole({ harness, home: h.home, env, taskQueue: h.taskQueue, namespace: 'default' }, { host: '127.0.0.1', port: 0, token: TOKEN });
  ({ browser, page } = await openConsole(server));
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await h?.stop();
});

describe("the console's streamed model text", () => {
  it('draws the text under the running turn while it streams, and drops the box once the turn ends', async () => {
    const { sessionId, turnId } = await start([{ content: ANSWER }]);
    await page.goto(`${server.base}/#/s/${encodeURIComponent(sessionId)}`);
    const box = page.locator(`.streaming[data-turn="${turnId}"]`);
    await box.locator('pre.streamed-text').filter({ hasText: 'word5 ' }).waitFor({ timeout: 30_000 });
    // Drawn while the turn ran, not after it.
    expect((await h.client.workflow.getHandle(turnId).describe()).status.name).toBe('RUNNING');
    expect(await box.locator('.muted').textContent()).toBe('step 1: the model is writing …');
    await waitForTurn(h.client, turnId, { pollMs: 100, timeoutMs: 60_000 });
    await box.waitFor({ state: 'detached', timeout: 30_000 });
    await page.locator('[data-type="llm_call"][data-status="ok"]').filter({ hasText: 'word299. DONE' }).waitFor({ timeout: 30_000 });
  }, 120_000);

  it('streams a turn’s typed events with every text escaped, the pieces adding up to the reply', async () => {
    const hostile = `<script>window.__ran = 1</script> \u202eevil\u202c ${'pad '.repeat(40)}DONE`;
    const { turnId } = await start([{ content: hostile }]);
    const events = await sse(`/api/turn-events?id=${encodeURIComponent(turnId)}`);
    expect(events.at(-1)![0]).toBe('closed');
    const typed = events.filter(([e]) => e === 'message').map(([, d]) => d);
    expect(typed[0]).toMatchObject({ type: 'turn_started', turnId });
    expect(typed.at(-1)).toMatchObject({ type: 'final' });
    const deltas = typed.filter((d) => d.type === 'model_text_delta');
    expect(deltas.length).toBeGreaterThan(0);
    const text = deltas.map((d) => d.text).join('');
    // Escaped by the terminal's rule: the bidi controls as \u202e …, the markup as text.
    expect(text).not.toContain('\u202e');
    expect(text).toContain('\\u202e');
    expect(text).toContain('<script>');
    expect(typed.find((d) => d.type === 'model_text')).toMatchObject({ text });
  }, 90_000);

  it('refuses a bad id and no token, and ends the stream of an unknown turn with `unknown`', async () => {
    expect((await get('/api/turn-events?id=not-a-turn')).status).toBe(400);
    expect((await get(`/api/turn-events?id=${encodeURIComponent('s-x/turn-1')}`, '')).status).toBe(401);
    const events = await sse(`/api/turn-events?id=${encodeURIComponent(`${newSessionId('nobody')}/turn-1`)}`);
    expect(events.map(([e]) => e)).toEqual(['unknown']);
  }, 60_000);
});

describe("the console's schedules", () => {
  it('lists each schedule with its next firing, a paused one as paused, values as text', async () => {
    const harness = new HarnessClient(h.client, { taskQueue: h.taskQueue, env: {} });
    const suffix = Date.now().toString(36);
    const hourly = `console-hourly-${suffix}`;
    const paused = `console-paused-${suffix}`;
    await harness.schedules.create({ id: hourly, every: '1h', text: '<b>Hourly</b> report', model: 'gpt-4o-mini' });
    await harness.schedules.create({ id: paused, cron: '0 9 * * 1-5', timezone: 'Europe/Berlin', text: 'Morning report', model: 'gpt-4o-mini', paused: true });
    try {
      await page.goto(`${server.base}/#/schedules`);
      const row = page.locator(`tr[data-schedule="${hourly}"]`);
      await row.waitFor({ timeout: 20_000 });
      expect(await row.locator('td.next').textContent()).toMatch(/\(in \d+ (min|s|h)\)$/);
      expect(await row.textContent()).toContain('<b>Hourly</b> report');
      expect(await row.textContent()).toContain('every 1h');
      expect(await row.textContent()).toContain('a new session');
      expect(await page.locator(`tr[data-schedule="${paused}"] td.next`).textContent()).toBe('paused');
      expect(await page.evaluate(() => document.querySelectorAll('#schedules-body b').length)).toBe(0);
    } finally {
      await harness.schedules.delete(hourly);
      await harness.schedules.delete(paused);
    }
  }, 90_000);
});

describe("the console's send box", () => {
  it('queues a message for the running turn, whose next step reads it; the view shows it as a message line', async () => {
    // The wait tool is read-only: the default policy runs it, and the turn is still running when the message comes.
    const { sessionId, turnId } = await start([
      { tool_calls: [{ name: 'wait', arguments: { seconds: 3, reason: 'the build' } }] },
      { expect: { messages_contain: 'also from the console' }, content: 'Read it. DONE' },
    ]);
    await page.goto(`${server.base}/#/s/${encodeURIComponent(sessionId)}`);
    await page.locator('[data-type="wait"][data-status="running"]').waitFor({ timeout: 30_000 });
    await page.fill('#send-text', 'also from the console');
    await page.click('#send');
    await page.locator('#decided .ok').filter({ hasText: 'sent' }).waitFor({ timeout: 20_000 });
    await page.locator('[data-type="message"]').filter({ hasText: 'also from the console' }).waitFor({ timeout: 30_000 });
    const done = await waitForTurn(h.client, turnId, { pollMs: 100, timeoutMs: 60_000 });
    expect(done.kind === 'done' && done.result.answer).toBe('Read it. DONE');
  }, 120_000);

  it('refuses an empty message, a bad mode, an unknown session and no token, each in one line', async () => {
    const post = (id: string, body: unknown, token = TOKEN) =>
      fetch(`${server.base}/api/sessions/${encodeURIComponent(id)}/send`, { method: 'POST', headers: { 'Content-Type': 'application/json', Origin: server.base, ...(token ? { Authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
    const { sessionId, turnId } = await start([{ content: 'Idle soon. DONE' }]);
    await waitForTurn(h.client, turnId, { pollMs: 100, timeoutMs: 60_000 });
    const empty = await post(sessionId, { text: '  ' });
    expect([empty.status, (await empty.json()).error]).toEqual([400, 'a message needs text']);
    const mode = await post(sessionId, { text: 'hi', mode: 'shout' });
    expect([mode.status, (await mode.json()).error]).toEqual([400, 'mode must be queue or interrupt, not "shout"']);
    const unknown = await post('s-nobody-here', { text: 'hi' });
    expect(unknown.status).toBe(400);
    expect((await unknown.json()).error).toContain('s-nobody-here');
    expect((await post(sessionId, { text: 'hi' }, '')).status).toBe(401);
  }, 90_000);
});
