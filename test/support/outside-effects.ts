/**
 * Three tools whose calls leave the sandbox, each with a counter of the calls that really reached
 * their world: a real MCP server (stdio, mcp-counting-server.cjs, a line per tools/call), a
 * loopback HTTP server in a foreign process (the session may reach it through
 * `network.allowPrivateHosts`), and a custom tool made with defineTool. A worker that offers the
 * custom tool, a scripted model endpoint, and the session config naming them all, under the
 * default policy.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineTool } from '../../api/define-tool';
import type { TurnResult } from '../../deterministic/session';
import type { SessionConfig } from '../../deterministic/session-config';
import { startScriptedModel, type ScriptedModelServer } from '../../scripted-model/server';
import { decideApprovals } from '../../client/session-client';
import { waitForTurn, type TurnOutcome } from '../../client/turn-wait';
import { startForeignServer, type ForeignServer } from './foreign-server';
import { DEFAULT_POLICY, endpointConfig, startHarness, type TestHarness } from './harness';
import { stdioSpec } from './mcp-servers';
import { tempDir } from './cli';

const COUNTING_SERVER = path.join(__dirname, 'mcp-counting-server.cjs');

/** What the three tools were really called with since the last `take()`. */
export interface Hits {
  mcp: number;
  http: number;
  custom: number;
}

export interface OutsideWorld {
  h: TestHarness;
  model: ScriptedModelServer;
  app: ForeignServer;
  /** The session config: the scripted endpoint, the counting MCP server, the app's host:port, the default policy. */
  config: SessionConfig;
  /** The calls of one step that reach each of the three, `tag` in their arguments. */
  calls(tag: string): { name: string; arguments: Record<string, unknown> }[];
  /** Calls that reached each world since the last take. */
  take(): Promise<Hits>;
  stop(): Promise<void>;
}

export async function startOutsideWorld(): Promise<OutsideWorld> {
  let custom = 0;
  const sendOrder = defineTool({
    name: 'send_order',
    description: 'Sends an order to the supplier (counted).',
    schema: z.object({ item: z.string().min(1) }),
    risk: 'write',
    run: async ({ item }) => {
      custom++;
      return { ordered: item };
    },
  });
  const h = await startHarness({ tools: [sendOrder] });
  const model = await startScriptedModel();
  const app = await startForeignServer('pong');
  const mcpCalls = path.join(tempDir('harness-outside-mcp-'), 'calls.txt');
  let mcpSeen = 0;
  const config: SessionConfig = {
    ...endpointConfig(model.url, {}, DEFAULT_POLICY),
    mcp: { servers: [stdioSpec('counter', process.execPath, [COUNTING_SERVER, mcpCalls])] },
    network: { allowPrivateHosts: [`127.0.0.1:${app.port}`] },
  };
  return {
    h,
    model,
    app,
    config,
    calls: (tag) => [
      { name: 'mcp__counter__send', arguments: { text: tag } },
      { name: 'http_request', arguments: { url: `http://127.0.0.1:${app.port}/${tag}` } },
      { name: 'send_order', arguments: { item: tag } },
    ],
    async take() {
      const lines = existsSync(mcpCalls) ? readFileSync(mcpCalls, 'utf8').split('\n').filter(Boolean).length : 0;
      const hits = { mcp: lines - mcpSeen, http: await app.takeHits(), custom };
      mcpSeen = lines;
      custom = 0;
      return hits;
    },
    async stop() {
      await app.stop();
      await model.close();
      await h.stop();
    },
  };
}

/** Approves every call a turn asks about (each `always` when asked to) until it is done. */
export async function approveAll(h: TestHarness, sessionId: string, first: TurnOutcome, always = false): Promise<TurnResult> {
  let out = first;
  while (out.kind === 'waiting') {
    await decideApprovals(h.client, sessionId, { approve: true, ...(always ? { always: true } : {}) });
    out = await waitForTurn(h.client, out.state.turnId, { pollMs: 100 });
  }
  return out.result;
}
