/**
 * MCP tool schemas from a hostile server (test/support/mcp-hostile-server.cjs) meeting hostile
 * model arguments inside the turn workflow: `$ref` cycles and recursion, backtracking patterns,
 * shared `anyOf` branches, a huge enum, deep nesting, odd tool names. Real turns under the default
 * policy; none may fail a workflow task, each call ends as a result the model reads.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TurnResult } from '../../deterministic/session';
import type { SessionConfig } from '../../deterministic/session-config';
import type { ScriptToolCall } from '../../scripted-model/script';
import { DEFAULT_POLICY, newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';
import { stdioSpec } from '../support/mcp-servers';
import { toolResults, watchedTurn } from '../support/watched-turn';

let h: TestHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.stop());

const DONE = 'HOSTILE_MCP_DONE';
const SERVER = path.join(__dirname, '..', 'support', 'mcp-hostile-server.cjs');
const tool = (name: string) => `mcp__hostile__${name}`;
const deepChild = (n: number) => `${'{"child":'.repeat(n)}{}${'}'.repeat(n)}`;

/** The session config: the hostile server, its tools allowed by its entry except `tree`, which asks. */
function config(calls: ScriptToolCall[]): SessionConfig {
  const script = { steps: [{ tool_calls: calls }, { content: DONE }] };
  const server = stdioSpec('hostile', process.execPath, [SERVER], { decision: 'allow', tools: { tree: { decision: 'ask' } } });
  return { ...scriptedConfig(script, {}, DEFAULT_POLICY), mcp: { servers: [server] } };
}

async function turn(calls: ScriptToolCall[], approve = false): Promise<TurnResult> {
  const r = await watchedTurn(h, newSessionId('hostile-mcp'), config(calls), 'go', { approve });
  expect([r.terminated_by, r.answer, r.error]).toEqual(['final_answer', DONE, undefined]);
  return r;
}

describe('hostile MCP schemas with hostile arguments', () => {
  it('every call is judged in bounded time and answered; none fails a workflow task', async () => {
    const r = await turn([
      // A $ref cycle recurses forever on any value: checked only as an object, the server answers.
      { name: tool('cycle'), arguments: { a: 1 } },
      // `^(a+)+$` on 40 a's and a "!" backtracks for hours: patterns are the server's to check.
      { name: tool('redos'), arguments: { word: `${'a'.repeat(40)}!` } },
      { name: tool('redos_keys'), arguments: { m: { [`${'a'.repeat(40)}!`]: 'x' } } },
      // anyOf levels sharing definitions: 2^24 tries for a failing value; checked only as an object.
      { name: tool('branches'), arguments: { a: 'x' } },
      // 1,500 levels of schema: checked only as an object.
      { name: tool('deep_schema'), arguments: { a: 'x' } },
      // A recursive schema with arguments 100,000 levels deep: refused before anything walks them.
      { name: tool('tree'), arguments: `{"name":"t","child":${deepChild(100_000)}}` },
      // Not one of 1,500 values: the message names the field but does not list them all.
      { name: tool('big_enum'), arguments: { color: 'nope' } },
      { name: tool('__proto__'), arguments: {} },
      { name: tool('constructor'), arguments: {} },
      { name: tool('toString'), arguments: {} },
      { name: tool('with_space'), arguments: {} },
      // Longer than a provider accepts: never offered.
      { name: tool('x'.repeat(200)), arguments: {} },
    ]);
    const results = toolResults(r.messages);
    expect(results.map((t) => (t.ok ? 'ok' : t.error_type))).toEqual([
      'ok',
      'ok',
      'ok',
      'ok',
      'ok',
      'INVALID_ARGUMENTS',
      'INVALID_ARGUMENTS',
      'ok',
      'ok',
      'ok',
      'ok',
      'UNKNOWN_TOOL',
    ]);
    expect(results[6]!.message).toMatch(/color/);
    expect(results[6]!.message!.length).toBeLessThan(1200);
    expect(JSON.stringify(results[1])).toContain('HOSTILE_OK');
  });

  it('a recursive schema with arguments 30 levels deep goes to a human and runs once approved', async () => {
    const r = await turn([{ name: tool('tree'), arguments: `{"name":"t","child":${deepChild(30)}}` }], true);
    expect(toolResults(r.messages).map((t) => t.ok)).toEqual([true]);
    expect(r.toolCalls[0]).toMatchObject({ approval: { approved: true } });
  });
});
