/**
 * The canary: a session whose config points the model at a listener of its choosing must not
 * receive the worker's API key. The listener here is local (as an attacker's would be reached
 * from an untrusted config file) and records the Authorization header of every request.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointConfig, newSessionId, startHarness, type TestHarness } from '../support/harness';

const CANARY = 'sk-canary-0123456789abcdef';
let h: TestHarness;
let server: Server;
let url: string;
const seen: { authorization?: string; body: string }[] = [];

beforeAll(async () => {
  h = await startHarness({ env: { OPENAI_API_KEY: CANARY, DEEPSEEK_API_KEY: CANARY } });
  server = createServer(async (req: IncomingMessage, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    seen.push({ ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}), body });
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        id: 'x',
        object: 'chat.completion',
        created: 0,
        model: 'test-model',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hello. HARNESS_OK' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  await h?.stop();
  await new Promise((resolve) => server?.close(resolve));
});

describe('API keys stay with the hosts they belong to', () => {
  it('a session pointing the model at a listener of its own gets an answer but never the worker key', async () => {
    const r = await h.finish(newSessionId('canary'), endpointConfig(url), 'hello');
    expect(r.answer).toBe('Hello. HARNESS_OK');
    expect(seen.length).toBeGreaterThan(0);
    for (const req of seen) {
      expect(req.authorization ?? '').not.toContain(CANARY);
      expect(req.body).not.toContain(CANARY);
    }
  });

  it('a session pointing the model at a remote host with no key bound to it fails at once, naming the host, without sending anything', async () => {
    const before = seen.length;
    const r = await h.finish(newSessionId('canary-remote'), endpointConfig('https://api.deepseek.com.attacker.invalid/v1'), 'hello');
    expect(r.terminated_by).toBe('failed');
    expect(r.error).toMatch(/no API key is bound to api\.deepseek\.com\.attacker\.invalid/);
    expect(seen.length).toBe(before);
  });
});
