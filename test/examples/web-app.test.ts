/**
 * examples/web-app as a user runs it: its built server (with its worker in the same process,
 * the scripted model of its script.json) on the test's Temporal server, driven over HTTP: a
 * session's events as Server-Sent Events up to the approval, the approval listed and approved,
 * the tool's result and the final answer (its text streamed first, from the database); a reconnect with Last-Event-ID gets exactly the rest;
 * bad requests are JSON errors of one line; a webhook with a bad signature is refused. Then its
 * page in Chromium: start, approve, see the answer (shown as text, never as HTML).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectHarness, type HarnessEvent } from '../../index';
import { cliEnv, removeTempDirs, ROOT, stopChild, tempDir } from '../support/cli';
import { TEST_DATABASE_URL } from '../support/harness';
import { launchBrowser, SCREENSHOTS } from '../support/browser';

const SECRET = 'web-app-test-secret';
let server: ChildProcess | undefined;
let base = '';
let log = '';

beforeAll(async () => {
  const env = cliEnv({
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    HARNESS_TASK_QUEUE: `web-app-${randomUUID()}`,
    EXAMPLE_HOME: tempDir('harness-web-app-'),
    DATABASE_URL: TEST_DATABASE_URL,
    PORT: '0',
    WEBHOOK_SECRET: SECRET,
  });
  server = spawn(process.execPath, [path.join(ROOT, 'dist', 'examples', 'web-app', 'server.js')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  server.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  server.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  base = await new Promise<string>((resolve, reject) => {
    const look = () => {
      const m = /listening on (http:\S+)/.exec(log);
      if (m) resolve(m[1]!);
    };
    server!.stdout!.on('data', look);
    server!.once('exit', (code) => reject(new Error(`the web app exited (${code}):\n${log}`)));
  });
}, 120_000);

afterAll(async () => {
  await stopChild(server);
  removeTempDirs();
});

async function call(method: string, route: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(base + route, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

/** Reads an SSE response, calling `each` with every message, until the server ends it. */
async function readSse(res: Response, each: (m: SseEvent) => Promise<void> | void): Promise<SseEvent[]> {
  const seen: SseEvent[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const m: SseEvent = { data: '' };
      for (const line of block.split('\n')) {
        const [field, ...rest] = line.split(':');
        const value = rest.join(':').replace(/^ /, '');
        if (field === 'id') m.id = value;
        else if (field === 'event') m.event = value;
        else if (field === 'data') m.data += value;
      }
      if (!m.data) continue; // retry and keepalive lines
      seen.push(m);
      await each(m);
    }
  }
  return seen;
}

/** The pending approvals until `callId` is among them (the list lags the turn by a moment). */
async function listed(callId: string): Promise<Array<Record<string, unknown>>> {
  for (;;) {
    const r = await call('GET', '/approvals');
    expect(r.status).toBe(200);
    const approvals = r.body.approvals as Array<Record<string, unknown>>;
    if (approvals.some((a) => a.callId === callId)) return approvals;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('the web-app example over HTTP', () => {
  it('streams a session to its approval, lists and approves it, and streams the result and the final answer', async () => {
    const started = await call('POST', '/sessions', { text: 'Publish a shopping note' });
    expect(started.status).toBe(201);
    const { sessionId, turnId } = started.body as { sessionId: string; turnId: string };
    expect(turnId).toBe(`${sessionId}/turn-1`);

    const url = `${base}/sessions/${encodeURIComponent(sessionId)}/events?turn=${encodeURIComponent(turnId)}`;
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    let approvals: Array<Record<string, unknown>> = [];
    const messages = await readSse(res, async (m) => {
      const e = JSON.parse(m.data) as HarnessEvent;
      if (e.type !== 'approval_needed') return;
      approvals = await listed(e.callId);
      const decided = await call('POST', `/approvals/${encodeURIComponent(sessionId)}/${encodeURIComponent(e.callId)}`, { decision: 'approve' });
      expect(decided.status, JSON.stringify(decided.body)).toBe(200);
      expect(decided.body).toMatchObject({ turnId, approved: true, decided: [{ callId: e.callId, tool: 'publish_note' }] });
    });
    const events = messages.map((m) => JSON.parse(m.data) as HarnessEvent);
    // The answer's text streams first (its worker and this client share the database), then comes whole.
    expect(events.filter((e) => e.type !== 'model_text_delta').map((e) => e.type)).toEqual(['turn_started', 'step', 'tool_call', 'approval_needed', 'approval_decided', 'tool_result', 'step', 'model_text', 'final']);
    const streamed = events.flatMap((e) => (e.type === 'model_text_delta' ? [e.text] : []));
    expect(streamed.length).toBeGreaterThan(0);
    const whole = events.find((e): e is Extract<HarnessEvent, { type: 'model_text' }> => e.type === 'model_text');
    expect(streamed.join('')).toBe(whole?.text);
    // Each message's id is its event's position.
    for (const [i, m] of messages.entries()) expect(m.id).toBe(`${events[i]!.offset}.${events[i]!.seq}`);

    const asked = events.find((e) => e.type === 'approval_needed')!;
    expect(approvals.find((a) => a.callId === asked.callId)).toMatchObject({ kind: 'approval', sessionId, turnId, tool: 'publish_note', risk: 'write', args: { title: 'Shopping' }, digest: expect.any(String) });
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ tool: 'publish_note', ok: true, result: { note_id: 'N-1', published: true } });
    expect(events.at(-1)).toMatchObject({ type: 'final', status: 'completed', answer: expect.stringContaining('Published the note "Shopping"') });
    // Decided: no longer listed.
    expect(((await call('GET', '/approvals')).body.approvals as Array<{ callId: string }>).some((a) => a.callId === asked.callId)).toBe(false);

    // A browser that lost the stream after the approval reconnects with its id: exactly the rest.
    const i = messages.findIndex((m) => JSON.parse(m.data).type === 'approval_needed');
    const again = await readSse(await fetch(url, { headers: { 'last-event-id': messages[i]!.id! } }), () => undefined);
    expect(again).toEqual(messages.slice(i + 1));
    // ?from= says the same; no turn named: the session's latest.
    expect(await readSse(await fetch(`${url}&from=${messages[i]!.id!}`), () => undefined)).toEqual(messages.slice(i + 1));
    expect(await readSse(await fetch(`${base}/sessions/${encodeURIComponent(sessionId)}/events`), () => undefined)).toEqual(messages);
  }, 90_000);

  it('answers bad requests with a JSON error of one line', async () => {
    const oneLine = (r: { status: number; body: Record<string, unknown> }, status: number) => {
      expect(r.status, JSON.stringify(r.body)).toBe(status);
      expect(typeof r.body.error).toBe('string');
      expect(r.body.error as string).not.toContain('\n');
      return r.body.error as string;
    };
    expect(oneLine(await call('POST', '/sessions', {}), 400)).toMatch(/^text is required/);
    expect(oneLine(await call('POST', '/sessions', { text: '   ' }), 400)).toMatch(/^text is required/);
    expect(oneLine(await call('POST', '/sessions', '{not json'), 400)).toBe('the body is not JSON');
    expect(oneLine(await call('POST', '/sessions', { text: 'hi', agent: 7 }), 400)).toBe('agent must be an agent name');
    expect(oneLine(await call('POST', '/sessions', 'text=hi', { 'content-type': 'application/x-www-form-urlencoded' }), 415)).toBe('send the body as application/json');
    expect(oneLine(await call('GET', '/sessions/web-app-no-such-session/events'), 404)).toBe('no session web-app-no-such-session in Temporal');
    expect(oneLine(await call('GET', '/sessions/web-app-no-such-session/events?turn=1&from=x'), 400)).toMatch(/^from must be an event id/);
    expect(oneLine(await call('GET', '/sessions/web-app-no-such-session/events?from=3.0'), 400)).toMatch(/^from needs turn/);
    expect(oneLine(await call('POST', '/approvals/web-app-no-such-session/call-1', { decision: 'approve' }), 404)).toMatch(/web-app-no-such-session/);
    expect(oneLine(await call('POST', '/approvals/web-app-no-such-session/call-1', { decision: 'maybe' }), 400)).toBe('decision must be "approve" or "deny"');
    expect(oneLine(await call('GET', '/nowhere'), 404)).toBe('no route GET /nowhere');
  }, 60_000);

  it('accepts a webhook signed with the secret and refuses a bad signature with 401', async () => {
    const body = JSON.stringify({ type: 'turn.waiting', sessionId: 's-1' });
    const sign = (secret: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    expect(await call('POST', '/webhook', body, { 'x-harness-signature': sign(SECRET) })).toEqual({ status: 200, body: { ok: true } });
    expect(await call('POST', '/webhook', body, { 'x-harness-signature': sign('another secret') })).toEqual({ status: 401, body: { error: 'bad signature' } });
    expect(await call('POST', '/webhook', body, { 'x-harness-signature': 'sha256=zz' })).toEqual({ status: 401, body: { error: 'bad signature' } });
    expect(await call('POST', '/webhook', body)).toEqual({ status: 401, body: { error: 'bad signature' } });
    // Signed over the raw bytes: the same JSON spaced differently is another body.
    expect(await call('POST', '/webhook', body.replace(':', ': '), { 'x-harness-signature': sign(SECRET) })).toEqual({ status: 401, body: { error: 'bad signature' } });
  });
});

describe('the web-app page in Chromium', () => {
  it('starts a session, shows the approval, approves it and shows the final answer as text', async () => {
    const browser = await launchBrowser();
    try {
      const page = await browser.context.newPage();
      await page.goto(base + '/');
      await page.fill('#text', 'Publish a shopping note');
      await page.click('#send');
      const card = page.locator('#approvals .approval');
      await card.waitFor({ timeout: 30_000 });
      expect(await card.locator('strong').textContent()).toBe('publish_note');
      // The arguments as text: the model's markup is shown, not rendered.
      expect(await card.locator('pre').textContent()).toContain('tea, milk <b>& honey</b>');
      expect(await card.locator('b').count()).toBe(0);
      await card.getByRole('button', { name: 'Approve' }).click();
      await page.locator('#events li[data-type="final"]').waitFor({ timeout: 30_000 });
      expect(await page.locator('#answer').textContent()).toBe('Published the note "Shopping" (note N-1). <script>alert(1)</script>');
      expect(await page.locator('#answer script').count()).toBe(0);
      expect(await page.locator('#events li[data-type="tool_result"]').textContent()).toContain('publish_note returned');
      expect(await page.locator('#approvals .approval').count()).toBe(0);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'web-app.png') });
    } finally {
      await browser.close();
    }
  }, 90_000);
});

describe('stopping', () => {
  it('ends by itself on SIGTERM, closing its worker, its streams and its connection', async () => {
    const exited = new Promise<number | null>((resolve) => server!.once('exit', (code) => resolve(code)));
    // An open stream (a turn that waits for approval) does not hold the server up.
    const started = await call('POST', '/sessions', { text: 'Publish a shopping note' });
    const stream = await fetch(`${base}/sessions/${encodeURIComponent(started.body.sessionId as string)}/events`);
    expect(stream.status).toBe(200);
    server!.kill('SIGTERM');
    const code = await Promise.race([exited, new Promise<string>((resolve) => setTimeout(() => resolve('still running 30 s after SIGTERM'), 30_000))]);
    expect(code, log).toBe(0);
    // The session it left waiting goes too: the test server is shared.
    const harness = await connectHarness({ env: { TEMPORAL_ADDRESS: inject('temporalAddress') } });
    try {
      await harness.temporal.workflow.getHandle(started.body.sessionId as string).terminate('test over');
    } finally {
      await harness.close();
    }
  }, 60_000);
});
