/**
 * Debian's Chromium (/usr/bin/chromium, installed by scripts/setup-browser.sh) driven by
 * playwright-core, headless and offline: no sandbox (root in CI), no GPU, no QUIC, no first-run,
 * background networking, component updates or sync (the network is closed), and a fresh profile
 * each launch. A missing browser is a failure, never a skip.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { ROOT } from './cli';

/** The Chromium the tests drive. */
export const CHROMIUM = '/usr/bin/chromium';

/** The flags every launch gets. */
export const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Where test screenshots go (git-ignored). */
export const SCREENSHOTS = path.join(ROOT, 'test-output', 'console');

/** A browser on a fresh profile; close() removes the profile too. */
export async function launchBrowser(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'harness-chromium-'));
  mkdirSync(SCREENSHOTS, { recursive: true });
  // A persistent context is how playwright takes a --user-data-dir of our choosing (a fresh one).
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS, viewport: { width: 1280, height: 800 } });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Chromium on a console's printed link: the page keeps the token from the fragment and lands on the session list. */
export async function openConsole(server: { url: string; base: string }): Promise<{ browser: Awaited<ReturnType<typeof launchBrowser>>; page: Page }> {
  const browser = await launchBrowser();
  const page = await browser.context.newPage();
  await page.goto(server.url);
  await page.waitForURL(`${server.base}/#/`, { timeout: 10_000 });
  return { browser, page };
}
