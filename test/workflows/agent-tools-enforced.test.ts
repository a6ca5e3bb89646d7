/**
 * A session of an agent runs only its agent's custom tools, whatever its turn's input says:
 * anything that reaches Temporal is untrusted, so a turn started directly with a forged input
 * (the agent's name, and a tool list with a worker tool the agent does not have) gets a structured
 * TOOL_NOT_ALLOWED result for that call from the worker, which never runs the tool; the agent's
 * own tool in the same step runs. A forged agent the worker lacks is refused the same way.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineTool } from '../../index';
import type { TurnInput, TurnResult } from '../../deterministic/session';
import { ALLOW_ALL, newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';
import { toolResults } from '../support/watched-turn';

const runs: string[] = [];
const ship = defineTool({
  name: 'ship_parcel',
  description: 'Ship a parcel to an address.',
  schema: z.object({ to: z.string().min(1) }),
  risk: 'write',
  run: async ({ to }) => {
    runs.push(`ship_parcel ${to}`);
    return { shipped: to };
  },
});
const lookup = defineTool({
  name: 'alpha_lookup',
  description: 'Look an order up by its id.',
  schema: z.object({ id: z.string() }),
  risk: 'read_only',
  run: ({ id }) => {
    runs.push(`alpha_lookup ${id}`);
    return { found: id };
  },
});

const dir = mkdtempSync(path.join(os.tmpdir(), 'harness-agent-tools-'));
let h: TestHarness;

beforeAll(async () => {
  const script = path.join(dir, 'agent-script.json');
  writeFileSync(script, JSON.stringify({ steps: [{ content: 'hello' }] }));
  const alpha = defineAgent({ name: 'alpha', instructions: 'You look orders up.', model: `scripted:${script}`, tools: [lookup], policy: { mode: 'auto' } });
  // The worker has both tools (a session without an agent is offered both); agent alpha has only alpha_lookup.
  h = await startHarness({ tools: [lookup, ship] });
  h.declarations.add({ agents: [alpha.spec] });
});
afterAll(async () => {
  await h?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Starts turnWorkflow directly with an input written by hand: a session of `agent` that lists both tools as its own. */
async function forgedTurn(agent: string, steps: unknown[]): Promise<TurnResult> {
  const sessionId = newSessionId('forged');
  const config = { ...scriptedConfig({ steps }, {}, ALLOW_ALL), agent, agentResolved: true as const };
  const input: TurnInput = {
    sessionId,
    turn: 1,
    turnId: `${sessionId}/turn-1`,
    config,
    history: [],
    memory: {},
    userMessage: 'ship it',
    modelCallBase: 0,
    customTools: { tools: [ship.spec, lookup.spec], worker: 'forged' },
  };
  const r = (await h.client.workflow.execute('turnWorkflow', { workflowId: input.turnId, taskQueue: h.taskQueue, args: [input] })) as TurnResult;
  return h.complete(r);
}

describe("an agent's session", () => {
  it('is refused a custom tool its agent does not have, at execution, and the tool does not run; its own tool runs', async () => {
    runs.length = 0;
    const r = await forgedTurn('alpha', [
      { tool_calls: [{ name: 'ship_parcel', arguments: { to: 'Oslo' } }, { name: 'alpha_lookup', arguments: { id: 'A-1' } }] },
      { content: 'Done. HARNESS_OK' },
    ]);
    expect(r.terminated_by).toBe('final_answer');
    const [shipped, looked] = toolResults(r.messages ?? []);
    expect(shipped).toEqual({
      ok: false,
      error_type: 'TOOL_NOT_ALLOWED',
      message: `ship_parcel is not one of agent "alpha"'s tools (it has alpha_lookup): the call was not run. A session runs only its agent's tools.`,
      recoverable: false,
      suggestion: 'continue with the tools you were offered, or tell the user that ship_parcel needs another agent',
    });
    expect(looked).toEqual({ ok: true, result: { found: 'A-1' } });
    expect(runs).toEqual(['alpha_lookup A-1']);
    expect(r.toolCalls.map((c) => [c.name, c.ok, c.error_type])).toEqual([
      ['ship_parcel', false, 'TOOL_NOT_ALLOWED'],
      ['alpha_lookup', true, undefined],
    ]);
  });

  it('naming an agent the worker does not have runs none of its custom tools', async () => {
    runs.length = 0;
    const r = await forgedTurn('gamma', [{ tool_calls: [{ name: 'alpha_lookup', arguments: { id: 'A-2' } }] }, { content: 'Done. HARNESS_OK' }]);
    const [looked] = toolResults(r.messages ?? []);
    expect(looked).toMatchObject({ ok: false, error_type: 'TOOL_NOT_ALLOWED', recoverable: false, message: expect.stringMatching(/^the session's agent "gamma" is not one of this worker's agents \(it has alpha\): the call was not run/) });
    expect(runs).toEqual([]);
  });
});
