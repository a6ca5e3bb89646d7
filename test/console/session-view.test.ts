/**
 * The console's session list and session view in a real browser (Debian's Chromium) against two
 * real workers on two task queues, under the default policy: a session of the other queue is
 * listed, with its queue in a column, and decided (HARNESS_CONSOLE_QUEUES narrows the list to the
 * queues it names, `harness console --queues` in its place); a call is
 * approved or denied in the session view, bound to the digest it shows as the inbox's card is,
 * and the turn goes on; a session waiting for approval shows the tokens and cost its first step
 * used, the figures `harness cost` prints; a label never says its kind twice (`step 1`, not
 * `step step 1`).
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { HarnessClient } from '../../api/client';
import { startConsole, type ConsoleServer } from '../../console/server';
import { sendMessage } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { resolvePricing } from '../../config/prices';
import { DEFAULT_POLICY, newSessionId, scriptedConfig, startHarness, TEST_DATABASE_URL, type TestHarness } from '../support/harness';
import { launchBrowser, openConsole, SCREENSHOTS } from '../support/browser';
import { cliEnv, describeResult, parseJson, removeTempDirs, runCli, spawnCli, stopChild, tempDir } from '../support/cli';

const TOKEN = 'console-session-view-token-0123456789';
let h: TestHarness;
/** A second worker on a task queue of its own: an app's sessions, as the console's own queue does not poll them. */
let other: TestHarness;
let server: ConsoleServer;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;

/** Starts a turn on the worker's queue without waiting for it; returns its turn id. */
async function start(on: TestHarness, sessionId: string, steps: unknown[], extra: Record<string, unknown> = {}): Promise<string> {
  const config = { ...scriptedConfig({ steps }, {}, DEFAULT_POLICY), ...extra };
  const { turnId } = await sendMessage(on.client, { taskQueue: on.taskQueue, sessionId, config, text: 'a task' });
  return turnId;
}

/** Waits until the turn waits for approval. */
async function waitingForApproval(on: TestHarness, turnId: string): Promise<void> {
  const out = await waitForTurn(on.client, turnId, { pollMs: 100, timeoutMs: 30_000 });
  expect(out.kind === 'waiting' && out.state.status).toBe('waiting_for_approval');
}

/** Opens the session view and waits for its pending approval's buttons. */
async function openPending(sessionId: string) {
  await page.goto(`${server.base}/#/`);
  await page.goto(`${server.base}/#/s/${encodeURIComponent(sessionId)}`);
  const span = page.locator('[data-type="approval"][data-status="running"]').first();
  await span.locator('button.approve').waitFor({ timeout: 20_000 });
  return span;
}

const api = (base: string, p: string) => fetch(`${base}${p}`, { headers: { Authorization: `Bearer ${TOKEN}` } });

beforeAll(async () => {
  h = await startHarness();
  other = await startHarness();
  const harness = new HarnessClient(h.client, { taskQueue: h.taskQueue });
  server = await startConsole({ harness, home: h.home, env: { DATABASE_URL: TEST_DATABASE_URL }, taskQueue: h.taskQueue, namespace: 'default' }, { host: '127.0.0.1', port: 0, token: TOKEN });
  ({ browser, page } = await openConsole(server));
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await other?.stop();
  await h?.stop();
  removeTempDirs();
});

describe('the console across task queues and in the session view', () => {
  it("lists a session of another task queue, and approving its call in the session view lets its turn go on; HARNESS_CONSOLE_QUEUES narrows the list", async () => {
    const sessionId = newSessionId('console-queue');
    const turnId = await start(other, sessionId, [{ tool_calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'from another queue' } }] }, { content: 'written' }]);
    await waitingForApproval(other, turnId);

    await page.goto(`${server.base}/#/`);
    const row = page.locator(`tr[data-session="${sessionId}"]`);
    await row.locator('td.state-waiting_for_approval').waitFor({ timeout: 20_000 });
    expect(await page.locator('#queues').innerText()).toBe('every task queue');
    // Every queue listed: each row names its session's queue.
    await row.locator('td.queue').waitFor({ timeout: 20_000 });
    expect(await row.locator('td.queue').innerText()).toBe(other.taskQueue);
    expect(await page.locator('thead th').allInnerTexts()).toEqual(['session', 'queue', 'state', 'turns', 'tokens', 'cost', 'waiting for', 'last task', 'last activity']);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'sessions-every-queue.png'), fullPage: true });

    // The decision goes to the session's workflow id, whichever queue its worker polls.
    const span = await openPending(sessionId);
    expect(await span.locator('.grant').innerText()).toBe('always grants: every write_file call');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'session-pending.png'), fullPage: true });
    await span.locator('button.approve').click();
    await page.locator('#decided .ok').waitFor({ timeout: 20_000 });
    expect(await page.locator('#decided').innerText()).toMatch(/^approved /);
    const done = await waitForTurn(other.client, turnId, { pollMs: 100, timeoutMs: 30_000 });
    expect(done.kind === 'done' && done.result.answer).toBe('written');
    // The view follows: the call is decided, its buttons gone.
    await page.locator('[data-type="approval"][data-status="ok"]').waitFor({ timeout: 20_000 });
    expect(await page.locator('[data-type="approval"] button.approve').count()).toBe(0);
    const trace = await new HarnessClient(other.client).trace(turnId);
    expect(trace.spans.find((s) => s.span.type === 'approval')?.span.output).toMatchObject({ approved: true });

    // A console told its queues lists theirs alone.
    const narrow = await startConsole(
      { harness: new HarnessClient(h.client, { taskQueue: h.taskQueue }), home: h.home, env: { DATABASE_URL: TEST_DATABASE_URL, HARNESS_CONSOLE_QUEUES: ` ${h.taskQueue} ` }, taskQueue: h.taskQueue, namespace: 'default' },
      { host: '127.0.0.1', port: 0, token: TOKEN },
    );
    try {
      const mine = newSessionId('console-mine');
      await waitForTurn(h.client, await start(h, mine, [{ content: 'hello' }]), { pollMs: 100, timeoutMs: 30_000 });
      const rows = (await (await api(narrow.base, '/api/sessions')).json()) as { task_queue: string; ref: { session_id: string } }[];
      const listed = rows.map((r) => r.ref.session_id);
      expect(listed).toContain(mine);
      expect(rows.find((r) => r.ref.session_id === mine)?.task_queue).toBe(h.taskQueue);
      expect(listed).not.toContain(sessionId);
      expect(await (await api(narrow.base, '/api/config')).json()).toMatchObject({ queues: [h.taskQueue] });
      const every = ((await (await api(server.base, '/api/sessions')).json()) as { ref: { session_id: string } }[]).map((r) => r.ref.session_id);
      expect(every).toEqual(expect.arrayContaining([mine, sessionId]));
    } finally {
      await narrow.close();
    }
  });

  it('`harness console --queues` lists those queues in place of HARNESS_CONSOLE_QUEUES', async () => {
    const dir = tempDir('harness-console-queues-');
    const env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(dir, 'home'), HARNESS_CONSOLE_QUEUES: h.taskQueue, HARNESS_CONSOLE_TOKEN: TOKEN });
    const child = spawnCli(['console', '--port', '0', '--queues', ` ${other.taskQueue} , ${h.taskQueue},${other.taskQueue}`], { env, cwd: dir });
    try {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      for (let i = 0; i < 300 && !/#token=/.test(out) && child.exitCode === null; i++) await new Promise((r) => setTimeout(r, 100));
      const base = /(http:\/\/127\.0\.0\.1:\d+)\/#token=/.exec(out)?.[1];
      expect(base, out).toBeDefined();
      // The flag's queues, trimmed, each once, in its order.
      expect(await (await api(base!, '/api/config')).json()).toMatchObject({ queues: [other.taskQueue, h.taskQueue] });
    } finally {
      await stopChild(child);
    }
  }, 60_000);

  it('denies a call in the session view with a reason the model reads; no label says its kind twice', async () => {
    const sessionId = newSessionId('console-deny');
    const turnId = await start(h, sessionId, [
      { tool_calls: [{ name: 'write_file', arguments: { path: 'b.txt', content: 'nope' } }] },
      { expect: { last_message_contains: 'not today' }, content: 'understood' },
    ]);
    await waitingForApproval(h, turnId);
    const span = await openPending(sessionId);
    // A denial needs its reason: refused without one, nothing decided.
    await span.locator('button.deny').click();
    await page.locator('#decided .error').waitFor({ timeout: 20_000 });
    expect(await page.locator('#decided').innerText()).toContain('a denial needs a reason');
    await span.locator('input.reason').fill('not today');
    await span.locator('button.deny').click();
    await page.locator('#decided .ok').waitFor({ timeout: 20_000 });
    const done = await waitForTurn(h.client, turnId, { pollMs: 100, timeoutMs: 30_000 });
    expect(done.kind === 'done' && done.result.answer).toBe('understood');

    await page.locator('[data-type="turn"][data-status="ok"]').waitFor({ timeout: 30_000 });
    const names = await page.locator('#spans .name').allInnerTexts();
    expect(names).toContain('step 1');
    expect(names).toContain('approval write_file');
    for (const name of names) expect(name, name).not.toMatch(/^(\S+) \1\b/);
    // A step's payloads are labelled likewise.
    await page.locator('.span.step .line').first().click();
    await page.locator('.span.step .details .payload').first().waitFor({ timeout: 20_000 });
    for (const name of await page.locator('.span.step .details .payload strong').allInnerTexts()) expect(name, name).not.toMatch(/^(\S+) \1\b/);
  });

  it('shows the tokens and cost a session waiting for approval used so far, by turn and in the list: the figures `harness cost` prints', async () => {
    const sessionId = newSessionId('console-cost');
    const pricing = resolvePricing({ provider: 'scripted', model: 'scripted' }, { scripted: { input: 2, output: 8 } });
    const turnId = await start(h, sessionId, [{ content: 'x'.repeat(400), tool_calls: [{ name: 'write_file', arguments: { path: 'c.txt', content: 'c' } }] }, { content: 'done' }], { pricing });
    await waitingForApproval(h, turnId);

    const dir = tempDir('harness-console-cost-');
    const env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(dir, 'home') });
    const json = await runCli(['cost', sessionId, '--json'], { env, cwd: dir, timeoutMs: 60_000 });
    expect(json.code, describeResult(json)).toBe(0);
    const ledger = parseJson<{ total: { usd: number; total_tokens: number } }>(json);
    expect(ledger.total.total_tokens).toBeGreaterThan(0);
    expect(ledger.total.usd).toBeGreaterThan(0);
    const text = await runCli(['cost', sessionId], { env, cwd: dir, timeoutMs: 60_000 });
    expect(text.code, describeResult(text)).toBe(0);
    const lines = text.stdout.trim().split('\n');
    const byTurn = lines.find((l) => l.trim().startsWith(`${turnId} `))!.trim();

    // The list: the row's tokens and money are the ledger's.
    await page.goto(`${server.base}/#/`);
    const row = page.locator(`tr[data-session="${sessionId}"]`);
    await row.locator('td.state-waiting_for_approval').waitFor({ timeout: 20_000 });
    const tokens = await row.locator('td.tokens').innerText();
    const money = await row.locator('td.cost').innerText();
    expect(Number(tokens.replace(/,/g, ''))).toBe(ledger.total.total_tokens);
    expect(money).toMatch(/^\$0\.\d+$/);
    expect(lines[0]).toBe(`session ${sessionId} · 1 turn · ${money} · ${tokens} tokens`);

    // The session view: the total as `harness cost`'s first line ends, each turn as its `by turn` line.
    await page.goto(`${server.base}/#/s/${encodeURIComponent(sessionId)}`);
    await page.locator('#cost .cost-total').waitFor({ timeout: 20_000 });
    expect(lines[0]!.endsWith(` · ${await page.locator('#cost .cost-total').innerText()}`)).toBe(true);
    expect(`${turnId}  ${await page.locator(`#cost tr[data-turn="${turnId}"] .turn-cost`).innerText()}`).toBe(byTurn);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'session-cost.png'), fullPage: true });
  });
});
