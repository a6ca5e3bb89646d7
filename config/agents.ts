/**
 * Agents as a worker holds them: each one's model, instructions, policy, limits, MCP servers,
 * skills folders and custom tools, resolved once, when the worker starts, from what its owner
 * declared (defineAgent in code, or the `agents` of the worker's config file). A session names an
 * agent; the worker gives it these settings (activities/agents.ts).
 */
import path from 'node:path';
import type { z } from 'zod';
import type { Limits, ModelSpec } from '../deterministic/session-config';
import type { Budget } from '../deterministic/budget';
import type { McpServerSpec } from '../deterministic/mcp';
import type { HarnessTool } from '../deterministic/custom-tools';
import type { Price, Pricing } from '../deterministic/pricing';
import type { OutputSpec } from '../deterministic/output';
import type { WebhookDeclaration } from '../deterministic/webhook';
import { freezePolicy } from '../deterministic/policy';
import { parsePolicy, type Policy } from '../deterministic/policy/schema';
import { UsageError } from '../machine/errors';
import type { AgentEntry } from './agent-schema';
import { checkBudgetPricing } from './budget';
import { limitsOf, type LimitsConfig } from './limits';
import { resolvePricing } from './prices';
import { modelSpec } from './resolve';
import { MAX_SUB_AGENT_NAME, SUB_AGENT_PREFIX } from '../deterministic/sub-agents';

/** One agent, resolved: what a session that names it runs with. Plain data. */
export interface AgentSpec {
  name: string;
  model: ModelSpec;
  /** The agent's instructions: the system prompt of its sessions. */
  systemPrompt: string;
  /** Frozen (the default rules written out), as a session's is. */
  policy: Policy;
  /** Every limit, defaults filled in; the budget among them. */
  limits: Limits;
  pricing: Pricing;
  /** The MCP servers its sessions use: declared on the worker with the agent. */
  mcpServers: McpServerSpec[];
  /** Skills folders (absolute) its sessions may use, beside the project's skills/: declared with the agent. */
  skills: string[];
  /** The worker's custom tools its sessions are offered, by name. */
  tools: string[];
  /** Structured output: its sessions' turns end with a JSON object of this schema. */
  output?: OutputSpec;
  /** Its sessions' webhook (declared on the worker with the agent); the secret by name only. */
  notify?: WebhookDeclaration;
  /** What a parent agent's model reads of it when it is a sub-agent (absent: the start of its instructions). */
  description?: string;
  /** Other agents of the worker its sessions may hand tasks to, each offered as the tool `agent__<name>` (deterministic/sub-agents.ts). */
  agents?: string[];
  /** Those of its sub-agents that run in the background (deterministic/background.ts): the call starts them and the parent goes on. */
  backgroundAgents?: string[];
}

/** What an agent is made of, checked field by field by its caller (the file's schema, defineAgent). */
export interface AgentParts {
  name: string;
  instructions: string;
  model: string;
  policy: Policy;
  limits?: LimitsConfig;
  budget?: Budget;
  mcpServers: McpServerSpec[];
  skills: readonly string[];
  tools: readonly string[];
  /** Where `scripted:` paths and skills folders start. */
  baseDir: string;
  /** The endpoint of an OpenAI-compatible model (absent: the worker's OPENAI_BASE_URL, else the default). */
  baseUrl?: string;
  /** Prices over the shipped table (a worker config file's `prices`). */
  prices?: Record<string, Price>;
  /** Structured output (checked by the caller). */
  output?: OutputSpec;
  /** Its sessions' webhook (checked by the caller). */
  notify?: WebhookDeclaration;
  description?: string;
  /** Its sub-agents, by name (checked against the worker's agents when the worker starts: checkSubAgents). */
  agents?: readonly string[];
  /** Those of `agents` that run in the background. */
  backgroundAgents?: readonly string[];
}

/**
 * The agent's spec. A model script that cannot be read, or a budget in money for a model without
 * a price, is a UsageError whose message starts with the field (`model: …`, `limits.budget…`).
 */
export function agentSpec(p: AgentParts): AgentSpec {
  const model = modelSpec(p.model, p.baseDir, p.baseUrl);
  const limits = limitsOf({ ...(p.limits ?? {}), ...(p.budget ? { budget: p.budget } : {}) });
  const pricing = resolvePricing(model, p.prices);
  checkBudgetPricing(limits.budget, pricing);
  return {
    name: p.name,
    model,
    systemPrompt: p.instructions,
    policy: freezePolicy(p.policy),
    limits,
    pricing,
    mcpServers: p.mcpServers,
    skills: p.skills.map((f) => path.resolve(p.baseDir, f)),
    tools: [...p.tools],
    ...(p.output ? { output: p.output } : {}),
    ...(p.notify ? { notify: { url: p.notify.url, secret: p.notify.secret } } : {}),
    ...(p.description ? { description: p.description } : {}),
    ...(p.agents?.length ? { agents: [...p.agents] } : {}),
    ...(p.backgroundAgents?.length ? { backgroundAgents: [...p.backgroundAgents] } : {}),
  };
}

/**
 * The agents of a worker's config file; their MCP servers are the file's, by name. A mistake is a
 * UsageError naming the file, the agent and the field.
 */
export function agentsOfFile(
  agents: Record<string, AgentEntry> | undefined,
  o: { file: string; servers: readonly McpServerSpec[]; baseUrl?: string; prices?: Record<string, Price> },
): AgentSpec[] {
  return Object.entries(agents ?? {}).map(([name, entry]) => {
    const where = `${o.file}: agents.${name}`;
    const servers = (entry.mcpServers ?? []).map((server) => {
      const found = o.servers.find((s) => s.name === server);
      const known = o.servers.map((s) => s.name).join(', ') || 'none';
      if (!found) throw new UsageError(`${where}.mcpServers: "${server}" is not one of the file's enabled mcpServers (${known})`, 'declare the server under "mcpServers" in the same file, or drop it from the agent');
      return found;
    });
    try {
      return agentSpec({
        name,
        instructions: entry.instructions,
        model: entry.model,
        policy: entry.policy ?? parsePolicy(undefined),
        ...(entry.limits ? { limits: entry.limits } : {}),
        ...(entry.budget ? { budget: entry.budget } : {}),
        mcpServers: servers,
        skills: entry.skills ?? [],
        tools: entry.tools ?? [],
        baseDir: path.dirname(o.file),
        ...(o.baseUrl ? { baseUrl: o.baseUrl } : {}),
        ...(o.prices ? { prices: o.prices } : {}),
        ...(entry.description ? { description: entry.description } : {}),
        // A sub-agent written `{ "agent": name, "background": true }` runs in the background.
        ...(entry.agents ? { agents: entry.agents.map((a) => (typeof a === 'string' ? a : a.agent)) } : {}),
        ...(entry.agents?.some((a) => typeof a !== 'string' && a.background) ? { backgroundAgents: entry.agents.flatMap((a) => (typeof a !== 'string' && a.background ? [a.agent] : [])) } : {}),
      });
    } catch (err) {
      if (err instanceof UsageError) throw new UsageError(`${where}: ${err.message}`, err.hint ?? 'see docs/configuration.md, "Agents"');
      throw err;
    }
  });
}

/**
 * An agent made by defineAgent (api/define-agent.ts): its spec and the tools it brings to the
 * worker. `O` is the type of its turns' `output` (unknown without structured output).
 */
export interface HarnessAgent<O = unknown> {
  readonly name: string;
  /** Its structured output's schema (defineAgent's `output`): `run(text, { agent })` types `result.output` by it. */
  readonly output?: z.ZodType<O>;
  /** Its custom tools: they join the worker's (createHarnessWorker's `tools`). */
  readonly tools: readonly HarnessTool[];
  /** Its sub-agents given as agents (defineAgent's `agents`): they join the worker's agents. */
  readonly agents?: readonly HarnessAgent[];
  /** What the worker holds of it. */
  readonly spec: AgentSpec;
}

/**
 * The worker's custom tools with its agents' own. An agent's tool that is the worker's (or another
 * agent's) is listed once; a different tool under the same name is a UsageError.
 */
export function withAgentTools(tools: readonly HarnessTool[], agents: readonly HarnessAgent[]): HarnessTool[] {
  const out = [...tools];
  const seen = new Map<string, { tool: HarnessTool; from: string }>();
  for (const t of tools) if (t && !seen.has(t.name)) seen.set(t.name, { tool: t, from: "the worker's tools" });
  for (const a of withGivenSubAgents(agents)) {
    for (const t of a.tools) {
      const had = seen.get(t.name);
      if (!had) {
        seen.set(t.name, { tool: t, from: `agent "${a.name}"` });
        out.push(t);
      } else if (had.tool !== t) {
        throw new UsageError(`tool "${t.name}" of agent "${a.name}" is another tool than the one of that name in ${had.from}`, 'define each tool once and give the same tool to every agent that uses it');
      }
    }
  }
  return out;
}

/** Refuses an agent that names a custom tool the worker does not have (a config file's agent names them). */
export function checkAgentTools(agents: readonly AgentSpec[], tools: readonly HarnessTool[]): void {
  const names = new Set(tools.map((t) => t.name));
  for (const a of agents) {
    const missing = a.tools.filter((t) => !names.has(t));
    if (missing.length) {
      throw new UsageError(
        `agent "${a.name}" names the tool${missing.length === 1 ? '' : 's'} ${missing.map((t) => `"${t}"`).join(', ')}, which the worker does not have (it has ${[...names].join(', ') || 'no custom tools'})`,
        'give the worker the tool (createHarnessWorker({ tools })), or drop it from the agent',
      );
    }
  }
}

/**
 * Refuses sub-agents that cannot run, when the worker starts: a name the worker has no agent of,
 * an agent listing itself, or a cycle (a sub-agent of a sub-agent … back to the first), in one
 * line naming the agents.
 */
export function checkSubAgents(agents: readonly AgentSpec[]): void {
  const byName = new Map(agents.map((a) => [a.name, a]));
  for (const a of agents) {
    for (const sub of a.agents ?? []) {
      if (!byName.has(sub)) {
        throw new UsageError(
          `agent "${a.name}" names the sub-agent "${sub}", which the worker does not have (it has ${[...byName.keys()].join(', ')})`,
          'give the worker that agent too (createHarnessWorker({ agents }), or the config file\'s "agents"), or drop it from the list',
        );
      }
      if (sub.length > MAX_SUB_AGENT_NAME) throw new UsageError(`agent "${a.name}" names the sub-agent "${sub}", whose name is longer than ${MAX_SUB_AGENT_NAME} characters`, `its tool name is ${SUB_AGENT_PREFIX}<name>, at most 64 characters: give it a shorter name`);
    }
  }
  // A cycle: a path of sub-agents coming back to an agent already on it.
  const done = new Set<string>();
  const visit = (name: string, path: string[]): void => {
    if (path.includes(name)) {
      const cycle = [...path.slice(path.indexOf(name)), name];
      throw new UsageError(`sub-agents go round in a cycle: ${cycle.join(' → ')}`, 'an agent may not be its own sub-agent, directly or through others: drop one of these from its agents');
    }
    if (done.has(name)) return;
    for (const sub of byName.get(name)?.agents ?? []) visit(sub, [...path, name]);
    done.add(name);
  };
  for (const a of agents) visit(a.name, []);
}

/** The agents given, then the sub-agents given to them as agents (defineAgent's `agents`) that are not among them, each once. */
export function withGivenSubAgents(agents: readonly HarnessAgent[]): HarnessAgent[] {
  // The given list as it is (an agent given twice is the caller's mistake, said by checkAgents).
  const out: HarnessAgent[] = [...agents];
  const add = (a: HarnessAgent) => {
    for (const sub of a?.agents ?? []) {
      if (out.includes(sub)) continue;
      out.push(sub);
      add(sub);
    }
  };
  for (const a of agents) add(a);
  return out;
}
