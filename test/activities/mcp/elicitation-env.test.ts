import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import type { ElicitationRequest } from '../../../activities/mcp/connection';
import { McpConfigError, McpUnavailableError } from '../../../activities/mcp/errors';
import { McpPool } from '../../../activities/mcp/pool';
import { mcpResultToToolResult } from '../../../activities/mcp/results';
import { everythingStdio, textOf } from '../../support/mcp-servers';

/** The session the pool's connections serve here. */
const S = { sessionId: 's-pool-test' };

describe('elicitation', () => {
  const logs: string[] = [];
  const pool = new McpPool({ env: {}, log: (line) => logs.push(line) });
  const spec = everythingStdio();
  afterAll(() => pool.closeAll());

  it('asks the open call\'s hook, and the clock stops while a human answers', async () => {
    const asked: ElicitationRequest[] = [];
    const r = await pool.callTool(spec, 'trigger-elicitation-request', {}, {
      scope: S, timeoutMs: 1000,
      onElicit: async (req) => {
        asked.push(req);
        await sleep(2000); // longer than the call's timeout: a human takes their time
        return { action: 'accept', content: { name: 'Ada Lovelace', check: true } };
      },
    });
    expect(asked).toHaveLength(1);
    expect(asked[0]!.message).toMatch(/provide inputs/);
    expect(asked[0]!.requestedSchema).toMatchObject({ type: 'object', properties: { name: { type: 'string' } }, required: ['name'] });
    const out = mcpResultToToolResult('everything', 'trigger-elicitation-request', r);
    expect(out).toMatchObject({ ok: true, result: { content: expect.stringContaining('Name: Ada Lovelace') } });
    expect((out.result as { content: string }).content).toContain('"action": "accept"');
  });

  it('a decline reaches the server', async () => {
    const r = await pool.callTool(spec, 'trigger-elicitation-request', {}, { scope: S, timeoutMs: 30_000, onElicit: () => Promise.resolve({ action: 'decline' }) });
    expect(textOf(r)).toMatch(/declined/);
  });

  it('a call without a hook answers decline, and says why in the log', async () => {
    const r = await pool.callTool(spec, 'trigger-elicitation-request', {}, { scope: S, timeoutMs: 30_000 });
    expect(textOf(r)).toMatch(/declined/);
    expect(logs.some((l) => /declined an elicitation request/.test(l))).toBe(true);
  });

  it('with two calls open the question cannot be attributed: decline', async () => {
    let hooked = 0;
    const hook = () => {
      hooked++;
      return Promise.resolve({ action: 'accept' as const, content: { name: 'x' } });
    };
    const slow = pool.callTool(spec, 'trigger-long-running-operation', { duration: 4, steps: 1 }, { scope: S, timeoutMs: 30_000, onElicit: hook });
    await sleep(200);
    const r = await pool.callTool(spec, 'trigger-elicitation-request', {}, { scope: S, timeoutMs: 30_000, onElicit: hook });
    await slow;
    expect(textOf(r)).toMatch(/declined/);
    expect(hooked).toBe(0);
  });
});

describe('environment of stdio servers', () => {
  const pool = new McpPool({ env: { OPENAI_API_KEY: 'sk-canary', HELLO: 'hello from the worker', PATH: process.env.PATH } });
  afterAll(() => pool.closeAll());

  it('passes a minimal environment plus the spec\'s, with ${VAR} resolved; never the worker\'s secrets', async () => {
    const spec = everythingStdio({ env: { GREETING: '${HELLO}', LITERAL: '$HELLO and ${HELLO}!' } });
    const r = await pool.callTool(spec, 'get-env', {}, { scope: S, timeoutMs: 30_000 });
    const env = JSON.parse(textOf(r)) as Record<string, string>;
    expect(env.GREETING).toBe('hello from the worker');
    expect(env.LITERAL).toBe('$HELLO and hello from the worker!');
    expect(JSON.stringify(r)).not.toContain('sk-canary');
    expect(env.OPENAI_API_KEY).toBeUndefined();
  });

  it('a variable the worker does not set is a config error naming server, field and variable', async () => {
    const spec = everythingStdio({ name: 'needs-key', env: { API_KEY: '${MISSING_KEY}' } });
    const err = await pool.listTools(spec, { scope: S, timeoutMs: 30_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpConfigError);
    expect(err).toBeInstanceOf(McpUnavailableError);
    expect((err as Error).message).toBe("mcp server needs-key: env API_KEY uses ${MISSING_KEY}, which is not set in the worker's environment");
  });
});
