/**
 * `defineAgent`: an agent in code (its instructions, model, tools, MCP servers, skills, policy,
 * limits and budget), served by a worker (createHarnessWorker({ agents })). A session names it
 * (`send(text, { agent })`, `harness run --agent`); the worker gives the session the agent's
 * settings, and the session may narrow them but never add to them.
 */
import { z } from 'zod';
import type { HarnessTool } from '../deterministic/custom-tools';
import type { Budget } from '../deterministic/budget';
import { parsePolicy, PolicyConfigError, type Policy, type PolicyInput } from '../deterministic/policy/schema';
import { UsageError } from '../machine/errors';
import { AGENT_NAME, MAX_INSTRUCTIONS_CHARS } from '../config/agent-schema';
import { agentSpec, type HarnessAgent } from '../config/agents';
import { budgetSchema } from '../config/budget';
import { limitsSchema, type LimitsConfig } from '../config/limits';
import { mcpServersSchema, resolveMcpServers, type McpServerDeclaration } from '../config/mcp';
import { outputSpecOf, type OutputOf } from './output';
import type { WebhookDeclaration } from '../deterministic/webhook';
import { webhookProblem } from '../workers/declarations';

/**
 * What defineAgent takes. Relative paths (`scripted:<file>`, skills folders, a server's `cwd`) start at the process's working directory.
 * `S` is the zod object schema of its structured output, when it has one.
 */
export interface AgentDefinitionInput<S extends z.ZodObject | undefined = undefined> {
  /** What sessions name it by: letters, digits, `_` and `-`, starting with a letter (at most 64). */
  name: string;
  /** The system prompt of its sessions. */
  instructions: string;
  /** A model name for the OpenAI-compatible endpoint the worker is set up for (OPENAI_BASE_URL, HARNESS_MODEL_KEYS), or `scripted:<file>`. */
  model: string;
  /** Tools made with defineTool: they join the worker's tools, and a session of this agent is offered only these (default: none). */
  tools?: readonly HarnessTool[];
  /** MCP servers its sessions use, declared on the worker with the agent (the shape of harness.config.json's `mcpServers`). */
  mcpServers?: Readonly<Record<string, McpServerDeclaration>>;
  /** Skills folders its sessions may use, beside the project's skills/, declared on the worker with the agent. */
  skills?: readonly string[];
  /** The permission policy (harness.config.json's `policy`; default: mode `ask` with the default rules). */
  policy?: PolicyInput;
  /** Limits, as in harness.config.json's `limits` (seconds); the defaults for the rest. */
  limits?: LimitsConfig;
  /** What a turn and a session may spend, in tokens or USD (harness.config.json's `limits.budget`). */
  budget?: Budget;
  /**
   * Structured output: a zod object schema every turn's final answer must match (the model is
   * told it; an answer that does not match goes back to it, limits.outputRetries times, then the
   * turn fails with OUTPUT_INVALID). The turn's result carries the validated object as `output`.
   */
  output?: S;
  /**
   * A webhook its sessions post to when a call waits for approval, a question for an answer, and
   * when a turn ends (docs/library.md, "Webhooks"): `{ url, secret: 'env:NAME' }`, the secret read
   * from the worker's environment, never put in history.
   */
  notify?: WebhookDeclaration;
  /** What a parent agent's model reads of this agent when it is a sub-agent (default: the start of its instructions). */
  description?: string;
  /**
   * Sub-agents: other agents its sessions may hand a task to, each offered to the model as the tool
   * `agent__<name>` taking `{ task }` (docs/library.md, "Sub-agents"). Agents from defineAgent
   * (they join the worker's agents) or names of the worker's agents; checked when the worker starts.
   * `{ agent, background: true }` runs one in the background: the call starts it and the parent
   * goes on; its result comes to the session as a message when it ends.
   */
  agents?: ReadonlyArray<SubAgentEntry>;
}

/** A sub-agent in defineAgent's `agents`: an agent, an agent's name, or either with `background: true`. */
export type SubAgentEntry = HarnessAgent<unknown> | string | { agent: HarnessAgent<unknown> | string; background?: boolean };

/** Raised for a malformed agent definition, before anything runs; the message is one line naming the agent and the field. */
export class AgentDefinitionError extends Error {
  override name = 'AgentDefinitionError';
}

const FIELDS: ReadonlyArray<keyof AgentDefinitionInput> = ['name', 'instructions', 'model', 'tools', 'mcpServers', 'skills', 'policy', 'limits', 'budget', 'output', 'notify', 'description', 'agents'];

/** Checks an agent definition and returns the agent; a mistake throws AgentDefinitionError naming the agent and the field. */
export function defineAgent<S extends z.ZodObject | undefined = undefined>(def: AgentDefinitionInput<S>): HarnessAgent<OutputOf<S>> {
  const where = `agent ${JSON.stringify(def?.name)}`;
  const fail = (what: string): never => {
    throw new AgentDefinitionError(`${where}: ${what}`);
  };
  if (typeof def !== 'object' || def === null) throw new AgentDefinitionError('defineAgent takes an object: { name, instructions, model, ... }');
  for (const key of Object.keys(def)) {
    if (!(FIELDS as readonly string[]).includes(key)) fail(`unknown field "${key}" (an agent has ${FIELDS.join(', ')})`);
  }
  if (typeof def.name !== 'string' || !AGENT_NAME.test(def.name)) fail(`name must match ${AGENT_NAME}`);
  if (typeof def.instructions !== 'string' || def.instructions.trim() === '') fail('instructions must say what the agent does (the system prompt of its sessions)');
  if (def.instructions.length > MAX_INSTRUCTIONS_CHARS) fail(`instructions must be at most ${MAX_INSTRUCTIONS_CHARS} characters`);
  if (typeof def.model !== 'string' || def.model.trim() === '') fail('model must be a model name or scripted:<file>');
  const tools = checkTools(def.tools, fail);
  const servers = checked('mcpServers', mcpServersSchema, def.mcpServers ?? {}, fail) as Record<string, unknown>;
  const skills = def.skills ?? [];
  if (!Array.isArray(skills) || skills.some((f) => typeof f !== 'string' || f === '')) fail('skills must be a list of folders');
  const limits = checked('limits', limitsSchema, def.limits ?? {}, fail);
  const budget = def.budget === undefined ? undefined : checked('budget', budgetSchema, def.budget, fail);
  const output = def.output === undefined ? undefined : outputSpecOf(def.output);
  if (output && 'problem' in output) fail(output.problem);
  if (def.description !== undefined && (typeof def.description !== 'string' || def.description.trim() === '' || def.description.length > 2000)) fail('description must be text of at most 2000 characters');
  const subAgents = checkSubAgentList(def.agents, fail);
  const notifyProblem = def.notify === undefined ? undefined : webhookProblem(def.notify);
  if (notifyProblem) fail(`notify: ${notifyProblem}`);
  let policy: Policy;
  try {
    policy = parsePolicy(def.policy);
  } catch (err) {
    if (err instanceof PolicyConfigError) return fail(err.message);
    throw err;
  }
  try {
    const spec = agentSpec({
      name: def.name,
      instructions: def.instructions,
      model: def.model,
      policy,
      limits,
      ...(budget ? { budget } : {}),
      mcpServers: resolveMcpServers(servers, process.cwd()),
      skills,
      tools: tools.map((t) => t.name),
      baseDir: process.cwd(),
      ...(output && !('problem' in output) ? { output } : {}),
      ...(def.notify ? { notify: def.notify } : {}),
      ...(def.description ? { description: def.description.trim() } : {}),
      ...(subAgents.length ? { agents: subAgents.map((a) => nameOf(a.agent)) } : {}),
      ...(subAgents.some((a) => a.background) ? { backgroundAgents: subAgents.filter((a) => a.background).map((a) => nameOf(a.agent)) } : {}),
    });
    const given = subAgents.map((a) => a.agent).filter((a): a is HarnessAgent => typeof a !== 'string');
    return Object.freeze({
      name: def.name,
      tools: Object.freeze([...tools]),
      spec,
      ...(given.length ? { agents: Object.freeze(given) } : {}),
      ...(def.output ? { output: def.output as unknown as z.ZodType<OutputOf<S>> } : {}),
    });
  } catch (err) {
    if (err instanceof UsageError) return fail(err.message);
    throw err;
  }
}

const nameOf = (a: HarnessAgent | string): string => (typeof a === 'string' ? a : a.name);

/** The sub-agents: each an agent from defineAgent or an agent's name (or `{ agent, background }`), each once. */
function checkSubAgentList(agents: AgentDefinitionInput['agents'], fail: (what: string) => never): Array<{ agent: HarnessAgent | string; background: boolean }> {
  if (agents === undefined) return [];
  const shape = 'agents must be a list of agents (from defineAgent) or agent names';
  if (!Array.isArray(agents)) return fail(shape);
  const names = new Set<string>();
  const out: Array<{ agent: HarnessAgent | string; background: boolean }> = [];
  for (const entry of agents as unknown[]) {
    const wrapped = typeof entry === 'object' && entry !== null && 'agent' in entry && !('spec' in entry);
    const a = (wrapped ? (entry as { agent: unknown }).agent : entry) as HarnessAgent | string | undefined;
    const background = wrapped ? (entry as { background?: unknown }).background : false;
    if (background !== undefined && typeof background !== 'boolean') fail('agents: background must be true or false');
    const name = typeof a === 'string' ? a : a?.spec ? a.name : undefined;
    if (name === undefined || !AGENT_NAME.test(name)) fail(shape);
    if (names.has(name!)) fail(`agents: "${name}" is given twice`);
    names.add(name!);
    out.push({ agent: a!, background: background === true });
  }
  return out;
}

/** The tools, each from defineTool, each name once. */
function checkTools(tools: readonly HarnessTool[] | undefined, fail: (what: string) => never): HarnessTool[] {
  if (tools === undefined) return [];
  if (!Array.isArray(tools)) return fail('tools must be a list of tools made with defineTool');
  const names = new Set<string>();
  for (const t of tools) {
    if (!t || typeof t.run !== 'function' || !t.spec) fail('every tool must come from defineTool({ name, description, schema, risk, run, ... })');
    if (names.has(t.name)) fail(`tool "${t.name}" is given twice`);
    names.add(t.name);
  }
  return [...tools];
}

/** The value parsed by the schema, or the first problem naming its field under `field`. */
function checked<T>(field: string, schema: z.ZodType<T>, value: unknown, fail: (what: string) => never): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  return fail(`${[field, ...issue.path.map(String)].join('.')}: ${issue.message}`);
}
