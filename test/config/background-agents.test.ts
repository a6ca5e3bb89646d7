/**
 * Background sub-agents without a server: defineAgent's and the config file's `agents` take
 * `{ agent, background: true }` beside agents and names; the worker refuses a background one it
 * has no agent of, in one line; a session of the agent is offered it marked `background`, told
 * its result comes later; limits.maxBackgroundAgents is a limit; the message its end becomes
 * names the sub-agent, its turn and the call it answers.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentDefinitionError, defineAgent } from '../../api/define-agent';
import { workerDeclarations } from '../../workers/declarations';
import { resolveAgent } from '../../activities/agents';
import { DEFAULT_LIMITS } from '../../deterministic/session-config';
import { limitsOf, limitsSchema } from '../../config/limits';
import { backgroundBound, backgroundMessage, backgroundSender, backgroundStarted } from '../../deterministic/background';
import { BACKGROUND_NOTE } from '../../deterministic/sub-agents';

const dir = mkdtempSync(path.join(os.tmpdir(), 'harness-background-agents-'));
const scout = defineAgent({ name: 'scout', description: 'Looks around.', instructions: 'You scout.', model: 'gpt-4o-mini' });
const writer = defineAgent({ name: 'writer', instructions: 'You write.', model: 'gpt-4o-mini' });
const lead = defineAgent({ name: 'lead', instructions: 'You lead.', model: 'gpt-4o-mini', agents: [{ agent: scout, background: true }, writer, { agent: 'helper', background: false }] });

describe('background sub-agents in an agent definition', () => {
  it('are `{ agent, background: true }` among agents and names', () => {
    expect(lead.spec.agents).toEqual(['scout', 'writer', 'helper']);
    expect(lead.spec.backgroundAgents).toEqual(['scout']);
    expect(lead.agents).toEqual([scout, writer]);
    expect(() => defineAgent({ name: 'a', instructions: 'x', model: 'm', agents: [{ agent: 'b', background: 'yes' as never }] })).toThrow(new AgentDefinitionError('agent "a": agents: background must be true or false'));
    expect(() => defineAgent({ name: 'a', instructions: 'x', model: 'm', agents: [{ agent: 'b', background: true }, 'b'] })).toThrow(/agents: "b" is given twice$/);
    expect(() => defineAgent({ name: 'a', instructions: 'x', model: 'm', agents: [{ agent: 'no such', background: true }] })).toThrow(/agents must be a list/);
  });

  it("are refused by the worker when it has no such agent; a config file's are read", () => {
    const ghostly = defineAgent({ name: 'ghostly', instructions: 'x', model: 'm', agents: [{ agent: 'ghost', background: true }] });
    expect(() => workerDeclarations({}, dir, { agents: [ghostly] })).toThrow(/^agent "ghostly" names the sub-agent "ghost", which the worker does not have \(it has ghostly\)$/);
    const file = path.join(dir, 'worker.json');
    const boss = { instructions: 'You delegate.', model: 'm', agents: [{ agent: 'helper', background: true }, 'clerk'] };
    writeFileSync(file, JSON.stringify({ agents: { boss, helper: { instructions: 'You help.', model: 'm' }, clerk: { instructions: 'You file.', model: 'm' } } }));
    const d = workerDeclarations({}, dir, { config: file });
    expect([d.agent('boss')!.agents, d.agent('boss')!.backgroundAgents]).toEqual([['helper', 'clerk'], ['helper']]);
    writeFileSync(file, JSON.stringify({ agents: { boss: { ...boss, agents: [{ agent: 'helper', background: 1 }] }, helper: { instructions: 'You help.', model: 'm' } } }));
    expect(() => workerDeclarations({}, dir, { config: file })).toThrow(/agents\.boss/);
  });

  it('are offered to a session marked background, the model told its result comes later', () => {
    const d = workerDeclarations({}, dir, { agents: [lead, { ...writer, name: 'helper', spec: { ...writer.spec, name: 'helper' } }] });
    const resolved = resolveAgent({ model: { provider: 'openai', model: 'x' }, systemPrompt: '', limits: DEFAULT_LIMITS, agent: 'lead', agentSet: [] }, d);
    expect(resolved.subAgents?.map((a) => [a.name, a.background])).toEqual([['scout', true], ['writer', undefined], ['helper', undefined]]);
    expect(resolved.subAgents![0]!.description).toBe(`Hand a task to the sub-agent "scout", which works on it alone with its own tools and answers: Looks around. ${BACKGROUND_NOTE}`);
  });
});

describe('background sub-agent calls', () => {
  it('have a limit of running ones, and say what started and what ended', () => {
    expect(limitsSchema.parse({ maxBackgroundAgents: 2 })).toEqual({ maxBackgroundAgents: 2 });
    expect(limitsOf({ maxBackgroundAgents: 2 }).maxBackgroundAgents).toBe(2);
    expect(limitsSchema.safeParse({ maxBackgroundAgents: -1 }).success).toBe(false);
    expect(backgroundBound({ name: 's', running: 3, max: 4 })).toBeUndefined();
    expect(backgroundBound({ name: 's', running: 4, max: 4 })).toMatchObject({
      ok: false,
      error_type: 'SUB_AGENT_LIMIT',
      message: 's was not started: a session may have 4 background sub-agents running at once (limits.maxBackgroundAgents), and this one has.',
    });
    expect(backgroundStarted('s', 'x/turn-1/agent-c0')).toMatchObject({ ok: true, result: { agent: 's', background: true, turnId: 'x/turn-1/agent-c0' } });
    const from = { turnId: 'x/turn-1/agent-c0', agent: 's', path: ['lead', 's'], callId: 'c0', parentTurnId: 'x/turn-1' };
    expect(backgroundMessage({ ...from, result: { ok: true, result: { answer: 'Found it.', agent: 's' } } })).toBe('[background sub-agent lead › s (turn x/turn-1/agent-c0), answering call c0 of x/turn-1] answered:\nFound it.');
    expect(backgroundMessage({ ...from, result: { ok: true, result: { output: { n: 1 }, agent: 's' } } })).toMatch(/finished with this output:\n\{"n":1\}$/);
    expect(backgroundMessage({ ...from, result: { ok: false, error_type: 'SUB_AGENT_FAILED', message: 's failed: boom', recoverable: true } })).toMatch(/\] failed: s failed: boom$/);
    expect(backgroundSender(from)).toBe('background sub-agent lead › s (x/turn-1/agent-c0)');
  });
});
