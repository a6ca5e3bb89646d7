/**
 * The worker's side of agents. A session that names an agent starts with the agent's settings,
 * as the worker holds them (config/agents.ts): the worker's declaration wins. What the session's
 * input set itself of those settings is kept only where it narrows the agent's (the same model, a
 * stricter policy mode or deny rules before the agent's, lower limits, some of its MCP servers,
 * skills folders and tools); anything else refuses the session with AGENT_MISMATCH naming the
 * field, and an agent the worker does not have with AGENT_UNKNOWN naming the ones it has. A call
 * of a custom tool the session's agent does not have is refused as it would run (TOOL_NOT_ALLOWED).
 */
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import type { AgentSpec } from '../config/agents';
import type { AgentField, Limits, ModelSpec, SessionConfig } from '../deterministic/session-config';
import type { Budget, BudgetLimit } from '../deterministic/budget';
import { canonicalJson } from '../deterministic/digest';
import { AGENT_MISMATCH, AGENT_REQUIRED, AGENT_UNKNOWN, toolError } from '../deterministic/errors';
import { BACKGROUND_NOTE, subAgentDescription, SUB_AGENT_NOT_ALLOWED, type SubAgentOffer } from '../deterministic/sub-agents';
import type { ToolResult } from '../deterministic/types';
import { mcpServerRef } from '../deterministic/mcp';
import { POLICY_MODES, type Policy } from '../deterministic/policy/schema';
import type { WorkerDeclarations } from './declarations';

/** Every field an agent decides: what a session input without `agentSet` counts as its own. */
const ALL_FIELDS: readonly AgentField[] = ['model', 'systemPrompt', 'policy', 'limits', 'mcp', 'skills', 'tools'];

/** The agent of that name, or the AGENT_UNKNOWN refusal naming the agents the worker has. */
export function agentNamed(name: string, declarations: WorkerDeclarations): AgentSpec {
  const agent = declarations.agent(name);
  if (agent) return agent;
  const names = declarations.agentNames();
  throw ApplicationFailure.nonRetryable(
    `agent ${JSON.stringify(name)} is not one of this worker's agents (${names.length ? `it has ${names.join(', ')}` : 'it has none'})`,
    AGENT_UNKNOWN,
  );
}

/** The session's config with its agent's settings in it; the session's own only where they narrow the agent's. */
export function resolveAgent(config: SessionConfig, declarations: WorkerDeclarations): SessionConfig {
  const agent = agentNamed(config.agent ?? '', declarations);
  const set = new Set<AgentField>(config.agentSet ?? ALL_FIELDS);
  const refuse = (field: string, problem: string): never => {
    throw ApplicationFailure.nonRetryable(`agent "${agent.name}": ${field}: ${problem}`, AGENT_MISMATCH);
  };
  // Sub-agents are the agent's alone: whatever the input listed is dropped (and each call is checked again).
  const { agentSet: _set, subAgents: _subAgents, ...rest } = config;

  if (set.has('model') && !sameModel(config.model, agent.model)) refuse('model', `the session's ${describeModel(config.model)} is not the agent's ${describeModel(agent.model)}`);
  // How the model is offered the tools is the session's setting, not the agent's.
  const model: ModelSpec = config.model.toolMode ? { ...agent.model, toolMode: config.model.toolMode } : agent.model;

  if (set.has('systemPrompt') && config.systemPrompt !== agent.systemPrompt) refuse('systemPrompt', "the session's system prompt is not the agent's instructions");

  let policy = agent.policy;
  if (set.has('policy') && config.policy) {
    if (!narrowsPolicy(config.policy, agent.policy)) refuse('policy', "the session's policy is not the agent's (it may only add deny rules before the agent's)");
    policy = config.policy;
  } else if (set.has('policyMode') && config.policy) {
    const mode = config.policy.mode;
    if (rank(mode) > rank(agent.policy.mode)) refuse('policy.mode', `${mode} is looser than the agent's ${agent.policy.mode}`);
    policy = { ...agent.policy, mode };
  }

  const limits = set.has('limits') ? narrowLimits(config.limits, agent.limits, refuse) : agent.limits;

  const agentServers = agent.mcpServers.map((s) => s.name);
  let servers = agentServers;
  if (set.has('mcp') && config.mcp) {
    servers = config.mcp.servers.map((s) => s.name);
    const extra = servers.find((name) => !agentServers.includes(name));
    if (extra !== undefined) refuse('mcp.servers', `MCP server "${extra}" is not one of the agent's (${agentServers.length ? `it has ${agentServers.join(', ')}` : 'it has none'})`);
  }

  let folders = agent.skills;
  if (set.has('skills') && config.skills) {
    folders = config.skills.folders.map((f) => path.resolve(f));
    const extra = folders.find((f) => !agent.skills.includes(f));
    if (extra !== undefined) refuse('skills.folders', `the skills folder ${extra} is not one of the agent's (${agent.skills.length ? agent.skills.join(', ') : 'it has none'})`);
  }

  let required: string[] = [];
  if (set.has('tools') && config.tools) {
    required = config.tools.required;
    const extra = required.find((t) => !agent.tools.includes(t));
    if (extra !== undefined) refuse('tools.required', `tool "${extra}" is not one of the agent's (${agent.tools.length ? `it has ${agent.tools.join(', ')}` : 'it has none'})`);
  }

  // Structured output is the agent's: a session may name the same schema (to type its results), never another.
  if (config.output && canonicalJson(config.output) !== canonicalJson(agent.output ?? null)) {
    refuse('output', agent.output ? "the session's output schema is not the agent's" : 'the agent has no structured output');
  }

  const { mcp: _mcp, skills: _skills, tools: _tools, output: _output, ...kept } = rest;
  return {
    ...kept,
    model,
    systemPrompt: agent.systemPrompt,
    policy,
    limits,
    pricing: agent.pricing,
    ...(servers.length ? { mcp: { servers: agent.mcpServers.filter((s) => servers.includes(s.name)).map(mcpServerRef) } } : {}),
    ...(folders.length ? { skills: { folders: [...folders] } } : {}),
    ...(required.length ? { tools: { required: [...required] } } : {}),
    ...(agent.output ? { output: agent.output } : {}),
    // The session's own webhook (checked against the worker's declarations next), else the agent's.
    ...(config.notify ? { notify: config.notify } : agent.notify ? { notify: { url: agent.notify.url } } : {}),
    agent: agent.name,
    agentResolved: true,
    ...(agent.agents?.length ? { subAgents: subAgentOffers(agent, declarations) } : {}),
  };
}

/** The sub-agents an agent lists, as its sessions offer them (the worker checked at start that it has each). */
function subAgentOffers(agent: AgentSpec, declarations: WorkerDeclarations): SubAgentOffer[] {
  return (agent.agents ?? []).flatMap((name) => {
    const sub = declarations.agent(name);
    if (!sub) return [];
    const description = subAgentDescription(name, sub.description, sub.systemPrompt);
    // A background sub-agent's call returns at once; the model is told its result comes later.
    return agent.backgroundAgents?.includes(name) ? [{ name, description: `${description} ${BACKGROUND_NOTE}`, background: true as const }] : [{ name, description }];
  });
}

/**
 * The config a sub-agent's turn runs with, from what this worker declares: refused
 * (SUB_AGENT_NOT_ALLOWED) unless the calling session's agent lists the sub-agent, whatever the
 * turn's input says (it is untrusted). The sub-agent's settings are all its own (model,
 * instructions, policy, limits, MCP servers, skills, tools, sub-agents); the session's other
 * settings (memory, network, metadata, webhook) carry over.
 */
export function resolveSubAgent(input: { parent: SessionConfig; name: string }, declarations: WorkerDeclarations): SessionConfig {
  const parentAgent = input.parent.agent === undefined ? undefined : declarations.agent(input.parent.agent);
  if (!parentAgent?.agents?.includes(input.name)) {
    const why =
      input.parent.agent === undefined
        ? 'the session runs no agent, and only an agent may have sub-agents'
        : !parentAgent
          ? `the session's agent ${JSON.stringify(input.parent.agent)} is not one of this worker's agents`
          : `"${input.name}" is not one of agent "${parentAgent.name}"'s sub-agents (${parentAgent.agents?.length ? `it has ${parentAgent.agents.join(', ')}` : 'it has none'})`;
    throw ApplicationFailure.nonRetryable(why, SUB_AGENT_NOT_ALLOWED);
  }
  const { agentResolved: _r, subAgents: _s, agentSet: _a, output: _o, mcp: _m, skills: _k, tools: _t, ...kept } = input.parent;
  const sub = agentNamed(input.name, declarations);
  // The session sets none of the fields an agent decides: every one is the sub-agent's.
  return resolveAgent({ ...kept, model: sub.model, systemPrompt: sub.systemPrompt, limits: sub.limits, agent: sub.name, agentSet: [] }, declarations);
}

/** The custom tools a session of the agent is offered (AGENT_UNKNOWN for an agent the worker does not have). */
export function agentTools(name: string, declarations: WorkerDeclarations): readonly string[] {
  return agentNamed(name, declarations).tools;
}

/**
 * Why a custom tool's call of a session may not run: the session's agent does not have the tool,
 * the worker does not have the agent, or (a session naming no agent) the tool is an agent's and not
 * the worker's own (TOOL_NOT_ALLOWED); undefined when it may. A session is offered only its agent's
 * tools; this holds it to them at execution, whatever the turn's input listed.
 */
export function agentToolRefusal(input: { name: string; agent?: string }, declarations: WorkerDeclarations): ToolResult | undefined {
  const has = (names: readonly string[]) => (names.length ? `it has ${names.join(', ')}` : 'it has none');
  let why: string | undefined;
  if (input.agent === undefined) {
    const own = declarations.defaultAgentTools();
    // A tool the worker lacks altogether is the executor's to answer (TOOL_UNAVAILABLE).
    const agentsOnly = own !== undefined && !own.includes(input.name) && declarations.agentSpecs().some((a) => a.tools.includes(input.name));
    if (agentsOnly) why = `${input.name} is an agent's tool, and this session names no agent (the worker's own tools: ${own.length ? own.join(', ') : 'none'})`;
  } else {
    const agent = declarations.agent(input.agent);
    why = !agent
      ? `the session's agent ${JSON.stringify(input.agent)} is not one of this worker's agents (${has(declarations.agentNames())})`
      : agent.tools.includes(input.name)
        ? undefined
        : `${input.name} is not one of agent "${agent.name}"'s tools (${has(agent.tools)})`;
  }
  if (!why) return undefined;
  return toolError('TOOL_NOT_ALLOWED', `${why}: the call was not run. A session runs only its agent's tools.`, {
    recoverable: false,
    suggestion: `continue with the tools you were offered, or tell the user that ${input.name} needs another agent`,
  });
}

/**
 * The AGENT_REQUIRED refusal of a session naming no agent, on a worker that runs only its agents'
 * sessions; nothing when the session names one or the worker runs agentless sessions too.
 */
export function checkAgentNamed(agent: string | undefined, declarations: WorkerDeclarations): void {
  if (agent !== undefined || !declarations.agentRequired()) return;
  const names = declarations.agentNames();
  throw ApplicationFailure.nonRetryable(
    `this worker runs only sessions that name one of its agents (${names.length ? names.join(', ') : 'it has none'}); start the session with \`--agent NAME\` or \`agent:\``,
    AGENT_REQUIRED,
  );
}

/** The same model at the same endpoint (a session that names no endpoint takes the agent's). */
function sameModel(session: ModelSpec, agent: ModelSpec): boolean {
  if (session.provider !== agent.provider || session.model !== agent.model) return false;
  if (session.provider === 'scripted') return agent.provider === 'scripted' && canonicalJson(session.script) === canonicalJson(agent.script);
  return session.baseUrl === undefined || (agent.provider === 'openai' && session.baseUrl === agent.baseUrl);
}

function describeModel(m: ModelSpec): string {
  return m.provider === 'scripted' ? 'scripted model' : `model ${m.model}${m.baseUrl ? ` at ${m.baseUrl}` : ''}`;
}

/** strict < ask < auto: how much runs without a person. */
function rank(mode: string): number {
  return (POLICY_MODES as readonly string[]).indexOf(mode);
}

/** The agent's policy, or it with deny rules put before its own (and a mode no looser). */
function narrowsPolicy(session: Policy, agent: Policy): boolean {
  if (canonicalJson(session) === canonicalJson(agent)) return true;
  if (session.version !== agent.version || session.defaults !== agent.defaults || rank(session.mode) > rank(agent.mode)) return false;
  const extra = session.rules.length - agent.rules.length;
  if (extra < 0 || canonicalJson(session.rules.slice(extra)) !== canonicalJson(agent.rules)) return false;
  return session.rules.slice(0, extra).every((r) => r.decision === 'deny');
}

/** Each limit the session sets at most the agent's (its budget too); the agent's for the rest. */
function narrowLimits(session: Limits, agent: Limits, refuse: (field: string, problem: string) => never): Limits {
  const out: Record<string, unknown> = { ...agent };
  for (const [key, value] of Object.entries(session) as Array<[keyof Limits, unknown]>) {
    if (key === 'budget' || typeof value !== 'number') continue;
    const ceiling = agent[key];
    if (typeof ceiling === 'number' && value > ceiling) refuse(`limits.${key}`, `${value} is above the agent's ${ceiling}`);
    out[key] = value;
  }
  const budget = narrowBudget(session.budget, agent.budget, refuse);
  if (budget) out.budget = budget;
  return out as unknown as Limits;
}

function narrowBudget(session: Budget | undefined, agent: Budget | undefined, refuse: (field: string, problem: string) => never): Budget | undefined {
  const out: Budget = {};
  for (const scope of ['turn', 'session'] as const) {
    const limit: BudgetLimit = {};
    for (const unit of ['tokens', 'usd'] as const) {
      const own = session?.[scope]?.[unit];
      const ceiling = agent?.[scope]?.[unit];
      if (own !== undefined && ceiling !== undefined && own > ceiling) refuse(`limits.budget.${scope}.${unit}`, `${own} is above the agent's ${ceiling}`);
      const value = own ?? ceiling;
      if (value !== undefined) limit[unit] = value;
    }
    if (limit.tokens !== undefined || limit.usd !== undefined) out[scope] = limit;
  }
  return out.turn || out.session ? out : undefined;
}
