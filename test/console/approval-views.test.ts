/**
 * What the console shows of a call waiting for approval, in a real browser (Debian's Chromium)
 * against a real worker under the default policy: every argument, in the inbox and in the
 * session view (a `{command, host, env}` call with its host and environment, not its command
 * alone); bidi controls, zero-width and other invisible characters as the same escapes the CLI
 * prints (the table test/cli/escape.test.ts checks), never raw; a content of several lines as
 * those lines (escaped by the same rule), not one JSON line of `\n`s; a long content by its size
 * and first lines, with a button that shows it whole.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { HarnessClient } from '../../api/client';
import { startConsole, type ConsoleServer } from '../../console/server';
import { sendMessage } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { DEFAULT_POLICY, newSessionId, scriptedConfig, startHarness, TEST_DATABASE_URL, type TestHarness } from '../support/harness';
import { launchBrowser, SCREENSHOTS } from '../support/browser';
import { everyInvisible, everyInvisibleShown, INVISIBLE } from '../support/invisible-characters';
import { OPS_ARGS, opsExecTool } from '../support/ops-tool';

const TOKEN = 'console-views-token-0123456789abcdef';
const received: unknown[] = [];
let h: TestHarness;
let server: ConsoleServer;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;

/** Starts a turn whose first step asks about `call`, and waits until it does. */
async function pending(sessionId: string, call: { name: string; arguments: unknown }): Promise<void> {
  const config = scriptedConfig({ steps: [{ tool_calls: [call] }, { content: 'done' }] }, {}, DEFAULT_POLICY);
  const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config, text: 'a task' });
  const out = await waitForTurn(h.client, turnId, { pollMs: 100, timeoutMs: 30_000 });
  expect(out.kind === 'waiting' && out.state.status).toBe('waiting_for_approval');
}

/** The inbox card of the session's pending call. */
async function inboxCard(sessionId: string): Promise<Locator> {
  await page.goto(`${server.base}/#/inbox`);
  const card = page.locator(`.card.approval:has(a[href="#/s/${encodeURIComponent(sessionId)}"])`);
  await card.waitFor({ timeout: 20_000 });
  return card;
}

/** The approval span of the session view, once it has arrived over the live stream. */
async function approvalSpan(sessionId: string): Promise<Locator> {
  await page.goto(`${server.base}/#/s/${encodeURIComponent(sessionId)}`);
  const span = page.locator('[data-type="approval"]').first();
  await span.locator('.args').waitFor({ timeout: 20_000 });
  return span;
}

/** What an argument's row shows as its value. */
const valueOf = (box: Locator, name: string) => box.locator(`.arg[data-arg="${name}"] .arg-value`).first().textContent();

beforeAll(async () => {
  h = await startHarness({ tools: [opsExecTool(received)] });
  const harness = new HarnessClient(h.client, { taskQueue: h.taskQueue });
  server = await startConsole({ harness, home: h.home, env: { DATABASE_URL: TEST_DATABASE_URL }, taskQueue: h.taskQueue, namespace: 'default' }, { host: '127.0.0.1', port: 0, token: TOKEN });
  browser = await launchBrowser();
  page = await browser.context.newPage();
  await page.goto(server.url);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await h?.stop();
});

describe('approval views of the console', () => {
  it('show a content of several lines as those lines, escaped, in the inbox and in the session view', async () => {
    const sessionId = newSessionId('console-lines');
    const content = 'first line\n\tindented <b>bold</b>\nhidden \u202e turn\n';
    await pending(sessionId, { name: 'write_file', arguments: { path: 'notes.txt', content } });
    const shown = 'first line\n\tindented <b>bold</b>\nhidden \\u202e turn\n';
    const card = await inboxCard(sessionId);
    const lines = card.locator('.arg[data-arg="content"] pre.arg-lines');
    expect(await lines.textContent()).toBe(shown);
    expect(await lines.evaluate((e) => e.childElementCount)).toBe(0);
    // The short path stays one JSON line.
    expect(await valueOf(card, 'path')).toBe('"notes.txt"');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'inbox-content-lines.png'), fullPage: true });

    const span = await approvalSpan(sessionId);
    expect(await span.locator('.arg[data-arg="content"] pre.arg-lines').textContent()).toBe(shown);
    expect(await span.locator('.arg[data-arg="content"] .arg-value').count()).toBe(1);
  });

  it('show the host and the environment of a command call, in the inbox and in the session view', async () => {
    const sessionId = newSessionId('console-ops');
    await pending(sessionId, { name: 'ops_exec', arguments: OPS_ARGS });
    const card = await inboxCard(sessionId);
    expect(await valueOf(card, 'command')).toBe('uptime');
    expect(await valueOf(card, 'host')).toBe('"prod-db-1"');
    expect(await valueOf(card, 'env')).toBe('{"LD_PRELOAD":"/tmp/evil.so"}');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'inbox-every-argument.png'), fullPage: true });

    const span = await approvalSpan(sessionId);
    expect(await valueOf(span, 'command')).toBe('uptime');
    expect(await valueOf(span, 'host')).toBe('"prod-db-1"');
    expect(await valueOf(span, 'env')).toBe('{"LD_PRELOAD":"/tmp/evil.so"}');
    expect(received).toEqual([]);
  });

  it('show bidi controls, zero-width and other invisible characters as the escapes the CLI prints, never raw', async () => {
    const sessionId = newSessionId('console-bidi');
    // Drawn raw, the override turns what follows around: `touch PWNED` reads as part of a comment.
    const command = `echo safe \u202e #; touch PWNED ${everyInvisible()}`;
    await pending(sessionId, { name: 'run_shell', arguments: { command } });
    const shown = `echo safe \\u202e #; touch PWNED ${everyInvisibleShown()}`;
    const raw = (text: string | null) => INVISIBLE.filter((c) => (text ?? '').includes(c.char)).map((c) => c.what);

    const card = await inboxCard(sessionId);
    expect(raw(await card.evaluate((e) => e.textContent))).toEqual([]);
    expect(await valueOf(card, 'command')).toBe(shown);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'inbox-bidi-escaped.png'), fullPage: true });

    const span = await approvalSpan(sessionId);
    expect(raw(await page.locator('#spans').evaluate((e) => e.textContent))).toEqual([]);
    expect(await valueOf(span, 'command')).toBe(shown);
  });

  it('show a long content by its size, and whole at the press of a button', async () => {
    const sessionId = newSessionId('console-long');
    const content = Array.from({ length: 50 }, (_, i) => `${String(i).padStart(2, '0')} ${'y'.repeat(96)}\n`).join('');
    await pending(sessionId, { name: 'write_file', arguments: { path: 'big.txt', content } });
    const card = await inboxCard(sessionId);
    const row = card.locator('.arg[data-arg="content"]');
    expect(await row.locator('.arg-size').textContent()).toBe(' (5000 bytes) ');
    // Its first lines (the preview history holds), as text.
    expect(await row.locator('pre.arg-lines').textContent()).toBe(`00 ${'y'.repeat(96)}\n01 ${'y'.repeat(17)}…`);
    await row.locator('button.expand').click();
    await row.locator('pre.arg-whole').waitFor({ timeout: 20_000 });
    expect(await row.locator('pre.arg-whole').textContent()).toBe(content);
    expect(await row.textContent()).toContain('5000 characters, 5000 bytes');
  });
});
