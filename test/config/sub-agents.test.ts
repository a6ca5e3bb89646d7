/**
 * Sub-agents without a server: defineAgent takes `agents` (agents or names) and `description`;
 * the worker checks them when it starts (a name it has no agent of, a name too long for its tool,
 * a cycle: one line each), takes the agents given as objects as its own, and gives a session of
 * the agent its sub-agents to offer (dropping any the session's input listed). A sub-agent's
 * config comes from the worker, and only for a sub-agent the session's agent lists.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/common';
import { AgentDefinitionError, defineAgent } from '../../api/define-agent';
import { workerDeclarations } from '../../workers/declarations';
import { resolveAgent, resolveSubAgent } from '../../activities/agents';
import { DEFAULT_LIMITS, type SessionConfig } from '../../deterministic/session-config';
import { parseSubAgentTurnId, rootTurnId, subAgentBound, subAgentDefinition, subAgentOf, subAgentResult, subAgentTurnId } from '../../deterministic/sub-agents';
import { UsageError } from '../../machine/errors';

const dir = mkdtempSync(path.join(os.tmpdir(), 'harness-sub-agents-'));
const researcher = defineAgent({ name: 'researcher', description: 'Finds facts.', instructions: 'You research.', model: 'gpt-4o-mini' });
const writer = defineAgent({ name: 'writer', instructions: 'You write.', model: 'gpt-4o-mini' });
const lead = defineAgent({ name: 'lead', instructions: 'You lead.', model: 'gpt-4o-mini', agents: [researcher, 'writer'], policy: { mode: 'auto' } });

/** A session input naming the agent, setting none of its fields. */
const request = (agent: string, extra: Partial<SessionConfig> = {}): SessionConfig => ({
  model: { provider: 'openai', model: 'x' },
  systemPrompt: '',
  limits: DEFAULT_LIMITS,
  agent,
  agentSet: [],
  ...extra,
});

describe('defineAgent agents', () => {
  it('takes agents and names, each once', () => {
    expect(lead.spec.agents).toEqual(['researcher', 'writer']);
    expect(lead.agents).toEqual([researcher]);
    expect(researcher.spec.description).toBe('Finds facts.');
    expect(() => defineAgent({ name: 'a', instructions: 'x', model: 'm', agents: ['b', 'b'] })).toThrow(new AgentDefinitionError('agent "a": agents: "b" is given twice'));
    expect(() => defineAgent({ name: 'a', instructions: 'x', model: 'm', agents: 'b' as never })).toThrow(/^agent "a": agents must be a list of agents \(from defineAgent\) or agent names$/);
    expect(() => defineAgent({ name: 'a', instructions: 'x', model: 'm', agents: ['no such'] })).toThrow(/agents must be a list/);
    expect(() => defineAgent({ name: 'a', instructions: 'x', model: 'm', description: ' ' })).toThrow(/^agent "a": description must be text of at most 2000 characters$/);
  });
});

describe('the worker', () => {
  it("takes the sub-agents given as agents, and refuses an unknown one or a cycle in one line", () => {
    // researcher comes with lead; writer, named, must be given.
    expect(() => workerDeclarations({}, dir, { agents: [lead] })).toThrow(UsageError);
    expect(() => workerDeclarations({}, dir, { agents: [lead] })).toThrow(/^agent "lead" names the sub-agent "writer", which the worker does not have \(it has lead, researcher\)$/);
    const d = workerDeclarations({}, dir, { agents: [lead, writer] });
    expect(d.agentNames().sort()).toEqual(['lead', 'researcher', 'writer']);

    const a = defineAgent({ name: 'a', instructions: 'x', model: 'm', agents: ['b'] });
    const b = defineAgent({ name: 'b', instructions: 'x', model: 'm', agents: ['c'] });
    const c = defineAgent({ name: 'c', instructions: 'x', model: 'm', agents: ['a'] });
    expect(() => workerDeclarations({}, dir, { agents: [a, b, c] })).toThrow(/^sub-agents go round in a cycle: a → b → c → a$/);
    const self = defineAgent({ name: 'self', instructions: 'x', model: 'm', agents: ['self'] });
    expect(() => workerDeclarations({}, dir, { agents: [self] })).toThrow(/^sub-agents go round in a cycle: self → self$/);
    const long = defineAgent({ name: `l${'o'.repeat(60)}`, instructions: 'x', model: 'm' });
    const names = defineAgent({ name: 'names', instructions: 'x', model: 'm', agents: [long] });
    expect(() => workerDeclarations({}, dir, { agents: [names] })).toThrow(/whose name is longer than 57 characters$/);
  });

  it("reads a config file's agents' sub-agents", () => {
    const file = path.join(dir, 'worker.json');
    writeFileSync(file, JSON.stringify({ agents: { boss: { instructions: 'You delegate.', model: 'm', agents: ['helper'] }, helper: { instructions: 'You help.', model: 'm', description: 'Helps.' } } }));
    expect(workerDeclarations({}, dir, { config: file }).agent('boss')!.agents).toEqual(['helper']);
    writeFileSync(file, JSON.stringify({ agents: { boss: { instructions: 'You delegate.', model: 'm', agents: ['ghost'] } } }));
    expect(() => workerDeclarations({}, dir, { config: file })).toThrow(/^agent "boss" names the sub-agent "ghost", which the worker does not have \(it has boss\)$/);
  });

  it("gives a session its agent's sub-agents, dropping the input's, and a sub-agent's config only for one its agent lists", () => {
    const d = workerDeclarations({}, dir, { agents: [lead, writer] });
    const forged = [{ name: 'writer', description: 'forged' }, { name: 'ghost', description: 'forged' }];
    const resolved = resolveAgent(request('lead', { subAgents: forged }), d);
    expect(resolved.subAgents).toEqual([
      { name: 'researcher', description: 'Hand a task to the sub-agent "researcher", which works on it alone with its own tools and answers: Finds facts.' },
      { name: 'writer', description: 'Hand a task to the sub-agent "writer", which works on it alone with its own tools and answers: You write.' },
    ]);
    expect(resolveAgent(request('writer', { subAgents: forged }), d).subAgents).toBeUndefined();

    const child = resolveSubAgent({ parent: resolved, name: 'researcher' }, d);
    expect(child).toMatchObject({ agent: 'researcher', systemPrompt: 'You research.', agentResolved: true });
    expect(child.subAgents).toBeUndefined();
    const refused = (parent: SessionConfig, name: string) => {
      try {
        resolveSubAgent({ parent, name }, d);
      } catch (err) {
        return [(err as ApplicationFailure).type, (err as Error).message];
      }
      return undefined;
    };
    expect(refused(resolveAgent(request('writer'), d), 'researcher')).toEqual(['SUB_AGENT_NOT_ALLOWED', `"researcher" is not one of agent "writer"'s sub-agents (it has none)`]);
    expect(refused({ ...resolved, agent: undefined }, 'researcher')).toEqual(['SUB_AGENT_NOT_ALLOWED', 'the session runs no agent, and only an agent may have sub-agents']);
  });
});

describe('sub-agent calls', () => {
  it('are tools named agent__<name>, in child turns whose ids name the parent turn and call', () => {
    expect(subAgentOf('agent__researcher')).toBe('researcher');
    expect(subAgentOf('agent__')).toBeUndefined();
    expect(subAgentOf('read_file')).toBeUndefined();
    const def = subAgentDefinition({ name: 'researcher', description: 'Finds facts.' });
    expect([def.name, def.risk, def.parallel, def.parameters.safeParse({ task: 'x' }).success, def.parameters.safeParse({}).success]).toEqual(['agent__researcher', 'read_only', true, true, false]);
    const id = subAgentTurnId('s-1/turn-2', 't2-s1-c0');
    expect(id).toBe('s-1/turn-2/agent-t2-s1-c0');
    expect(parseSubAgentTurnId(id)).toEqual({ parentTurnId: 's-1/turn-2', callId: 't2-s1-c0' });
    expect(rootTurnId(subAgentTurnId(id, 't2-s3-c1'))).toBe('s-1/turn-2');
    expect(parseSubAgentTurnId('s-1/turn-2')).toBeUndefined();
  });

  it('are bounded, and return the answer or a structured error', () => {
    expect(subAgentBound({ name: 'r', depth: 1, maxDepth: 2, calls: 7, maxCalls: 8 })).toBeUndefined();
    expect(subAgentBound({ name: 'r', depth: 3, maxDepth: 2, calls: 0, maxCalls: 8 })).toMatchObject({ ok: false, error_type: 'SUB_AGENT_LIMIT' });
    expect(subAgentBound({ name: 'r', depth: 1, maxDepth: 2, calls: 8, maxCalls: 8 })?.message).toBe('r was not started: a turn may call sub-agents 8 times (limits.maxSubAgentCalls), and this turn has.');
    expect(subAgentResult('r', { turnId: 't', terminated_by: 'final_answer', answer: 'A', steps: 1 })).toEqual({ ok: true, result: { answer: 'A', agent: 'r' } });
    expect(subAgentResult('r', { turnId: 't', terminated_by: 'finish', answer: '{}', output: { n: 1 }, steps: 1 })).toEqual({ ok: true, result: { output: { n: 1 }, agent: 'r' } });
    expect(subAgentResult('r', { turnId: 't', terminated_by: 'max_steps', answer: '', steps: 20 })).toMatchObject({ ok: false, error_type: 'SUB_AGENT_FAILED', message: 'r ended max_steps after 20 steps without an answer', recoverable: true });
  });
});
