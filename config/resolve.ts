/**
 * Configuration: `harness.config.json` (zod-validated; errors name the field), the
 * environment and flags, resolved into the SessionConfig a session is started with.
 * Precedence: flag, then environment, then file, then defaults.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { ModelSpec, SessionConfig } from '../deterministic/session-config';
import type { AgentField } from '../deterministic/session-config';
import { loadScript, ScriptError } from '../scripted-model/script';
import { allowPrivateHostSchema } from '../deterministic/allow-hosts';
import { JsonSyntaxError, parseJsonText } from '../deterministic/json-text';
import { parsePolicy, policySchemas, POLICY_MODES, type Policy } from '../deterministic/policy/schema';
import { mcpServerRef, type McpServerSpec } from '../deterministic/mcp';
import { freezePolicy } from '../deterministic/policy';
import { DEFAULT_COMPRESSION, type CompressionConfig } from '../deterministic/context/plan';
import { TOOL_MODE_SETTINGS, type ToolModeSetting } from '../deterministic/tool-mode';
import { UsageError, UserError } from '../machine/errors';
import { mcpServersSchema, resolveMcpServers } from './mcp';
import { isTrusted, trustedPart } from './trust';
import { pricesSchema, resolvePricing } from './prices';
import { budgetSchema, checkBudgetPricing } from './budget';
import { limitFields, limitsOf } from './limits';
import { AGENT_NAME, agentsSchema } from './agent-schema';

const positiveInt = z.number().int().positive();

/** The config file's shape. Every field optional; unknown fields are errors (typos show). */
export const FileConfigSchema = z
  .object({
    /** Model name for the OpenAI-compatible endpoint, or `scripted:<file>`. */
    model: z.string().min(1).optional(),
    /** Base URL of an OpenAI-compatible endpoint (DeepSeek: https://api.deepseek.com). */
    baseUrl: z.url().optional(),
    /** How the model is offered the tools: native tool calls, the text protocol, or auto (decided by the first call; docs/models.md). */
    toolMode: z.enum(['auto', 'native', 'text']).optional(),
    /** The system prompt every model call starts with. */
    systemPrompt: z.string().min(1).optional(),
    limits: z
      .object({
        ...limitFields,
        /** What a turn and the session may spend, in tokens or USD (docs/costs.md). */
        budget: budgetSchema,
      })
      .partial()
      .strict()
      .optional(),
    /** The permission policy: mode (strict, ask, auto) and rules; see docs/tools-and-policy.md. */
    policy: policySchemas().policy.optional(),
    /** Long-term memory: namespace (isolates users, projects, eval cases) and how many recent entries preload. */
    memory: z.object({ namespace: z.string().min(1).max(200), preload: z.number().int().min(0).max(50) }).partial().strict().optional(),
    /** Context compression: window, threshold (fraction of the usable window, or tokens), reply reserve, messages kept verbatim. */
    compression: z
      .object({
        contextWindow: positiveInt,
        threshold: z.number().positive(),
        outputReserve: z.number().int().min(0),
        keepTail: z.number().int().min(1).max(100),
        compactToolResultsOver: positiveInt,
      })
      .partial()
      .strict()
      .optional(),
    /** Extra skill folders (relative to the config file), beside the project's skills/. */
    skills: z.object({ folders: z.array(z.string().min(1)) }).strict().optional(),
    /** What http_request may reach beyond the public internet: `host:port` entries, each opening one port of a private or loopback host. */
    network: z.object({ allowPrivateHosts: z.array(allowPrivateHostSchema).max(100) }).strict().optional(),
    /** MCP servers whose tools join the session's (see docs/mcp.md). */
    mcpServers: mcpServersSchema.optional(),
    /** Prices per model, USD per million tokens, over the shipped default table (docs/costs.md). */
    prices: pricesSchema.optional(),
    /** Agents a worker started with this file serves, by name (a worker's setting: sessions name one with --agent). */
    agents: agentsSchema.optional(),
  })
  .strict();

/** The parsed config file. */
export type FileConfig = z.infer<typeof FileConfigSchema>;

/** The default system prompt: how the agent should work with its tools. */
export const DEFAULT_SYSTEM_PROMPT = [
  'You are an agent that completes tasks by thinking step by step and using tools.',
  'Work in the session workspace with read_file, write_file and list_files; call tools whenever they help, one or a few at a time.',
  'Tool results are JSON with ok, result, error_type, message and suggestion: when a call fails, read the suggestion and recover instead of repeating it.',
  'Ask the user with ask_user only when you cannot proceed without them. Save facts worth keeping with remember.',
  'When the task is done, reply with the final answer (or call finish).',
].join('\n');

/** A config file as a session or worker uses it: what it may set, and what was ignored for want of trust. */
interface LoadedConfig {
  config: FileConfig;
  file?: string;
  /** Settings of an untrusted file that were left out, in words (empty when trusted or named). */
  ignored: string[];
}

/**
 * Finds and parses the config file: --config, HARNESS_CONFIG, or ./harness.config.json. Of a file
 * found in the working directory (not named by the user) and not trusted, only the settings any
 * file may make are used: the rest (config/trust.ts) is left out and listed in `ignored`.
 */
export function loadFileConfig(explicit: string | undefined, env: NodeJS.ProcessEnv, cwd: string): LoadedConfig {
  const named = explicit ?? env.HARNESS_CONFIG;
  const file = named ? path.resolve(cwd, named) : path.join(cwd, 'harness.config.json');
  if (!existsSync(file)) {
    if (named) throw new UsageError(`config file ${file} does not exist`, 'check --config / HARNESS_CONFIG');
    return { config: {}, ignored: [] };
  }
  const config = parseConfigFile(file);
  if (named) return { config, file, ignored: [] };
  const part = trustedPart(config);
  if (!part.ignored.length || isTrusted(file, env)) return { config, file, ignored: [] };
  return { config: part.config, file, ignored: part.ignored };
}

/** The one line that says what an untrusted file's settings were ignored, and how to use them. */
export function ignoredNote(loaded: LoadedConfig, cwd: string): string | undefined {
  if (!loaded.ignored.length || !loaded.file) return undefined;
  const rel = path.relative(cwd, loaded.file) || loaded.file;
  return `note: ${rel} is not trusted, so it may not set ${loaded.ignored.join('; ')}: ignored (\`harness trust ${rel}\` to use them, or name it with --config)`;
}

/**
 * Reads and validates a config file. Errors name the file and the field (or the line and
 * column of a syntax error) and never quote the file's text.
 */
export function parseConfigFile(file: string): FileConfig {
  let raw: unknown;
  try {
    raw = parseJsonText(readFileSync(file, 'utf8'));
  } catch (err) {
    if (err instanceof JsonSyntaxError) throw new UsageError(`${file}: ${err.message}`, 'fix the JSON syntax (a missing comma or quote?), or move the file away');
    throw new UsageError(`${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? 'unknown error'})`, 'check its permissions, or move the file away');
  }
  const parsed = FileConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.length ? issue.path.join('.') : '(root)';
    // A refinement may say how to fix its field (see deterministic/allow-hosts.ts).
    const hint = issue.code === 'custom' && typeof issue.params?.hint === 'string' ? issue.params.hint : 'fix the field or remove it; see docs/configuration.md';
    throw new UsageError(`${file}: ${field}: ${issue.message}`, hint);
  }
  return parsed.data;
}

/** Flags that shape a session. */
interface ConfigFlags {
  model?: string;
  config?: string;
  policy?: string;
  /** The worker's agent the session runs as (its settings come from the worker). */
  agent?: string;
}

/**
 * Resolves the session configuration; a missing model is a one-line error with the fix. `note`
 * hears what an untrusted config file was not allowed to set.
 */
/** The error of a session config that names no model (a caller may know better what was meant). */
export const NO_MODEL = 'no model configured';

export function resolveSessionConfig(flags: ConfigFlags, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd(), note?: (line: string) => void): SessionConfig {
  const loaded = loadFileConfig(flags.config, env, cwd);
  const { config, file } = loaded;
  const ignored = ignoredNote(loaded, cwd);
  if (ignored) note?.(ignored);
  const fileDir = file ? path.dirname(file) : cwd;
  if (flags.agent !== undefined) return agentSessionConfig(flags.agent, flags, config, env, cwd);
  const fromFlagOrEnv = flags.model ?? env.HARNESS_MODEL;
  const modelText = fromFlagOrEnv ?? config.model;
  if (!modelText) {
    throw new UserError(
      NO_MODEL,
      'pass --model scripted:examples/demo.json for an offline demo, or set HARNESS_MODEL (e.g. gpt-4o-mini) and OPENAI_API_KEY',
    );
  }
  const spec = modelSpec(modelText, fromFlagOrEnv ? cwd : fileDir, env.OPENAI_BASE_URL ?? config.baseUrl);
  const model = withToolMode(spec, config, env);
  const limits = limitsOf(config.limits ?? {});
  const pricing = resolvePricing(model, config.prices);
  checkBudgetPricing(limits.budget, pricing);
  const mode = policyMode(flags.policy ?? env.HARNESS_POLICY);
  // The effective rules (defaults included) are written into the session's config, so a new
  // release's defaults can never change the decisions of a session already running.
  const mcpServers = resolveMcpServers(config.mcpServers, fileDir);
  const policy = effectivePolicy(config, mode);
  const skills = config.skills?.folders.length ? { skills: { folders: config.skills.folders.map((f) => path.resolve(fileDir, f)) } } : {};
  // The session names the servers and says how their tools are judged; the worker declares what runs.
  const mcp = mcpServers.length ? { mcp: { servers: mcpServers.map(mcpServerRef) } } : {};
  return { model, systemPrompt: config.systemPrompt ?? DEFAULT_SYSTEM_PROMPT, limits, policy, ...sessionSettings(config, env), ...skills, ...mcp, pricing };
}

/**
 * A session of a worker's agent. The agent's model, instructions, policy, limits, MCP servers and
 * skills are the worker's to give (activities/agents.ts), so the file's and the environment's are
 * not used: the config carries the defaults in their place, and lists in `agentSet` only what the
 * flags chose (a model, a policy mode), which the worker accepts only if it narrows the agent's.
 */
function agentSessionConfig(agent: string, flags: ConfigFlags, config: FileConfig, env: NodeJS.ProcessEnv, cwd: string): SessionConfig {
  if (!AGENT_NAME.test(agent)) throw new UsageError(`agent name ${JSON.stringify(agent)} is not valid`, 'agent names are letters, digits, - and _, a letter first (at most 64)');
  const set: AgentField[] = [];
  if (flags.model) set.push('model');
  // Without a model of the session's own, the worker puts the agent's in place of this one.
  const spec: ModelSpec = flags.model ? modelSpec(flags.model, cwd, undefined) : { provider: 'openai', model: `agent:${agent}` };
  const mode = policyMode(flags.policy);
  if (mode) set.push('policyMode');
  return {
    model: withToolMode(spec, config, env),
    systemPrompt: DEFAULT_SYSTEM_PROMPT,
    limits: limitsOf({}),
    policy: effectivePolicy({}, mode),
    ...sessionSettings(config, env),
    agent,
    agentSet: set,
  };
}

/** The model with the tool mode of the environment or the file, if either sets one. */
function withToolMode(spec: ModelSpec, config: FileConfig, env: NodeJS.ProcessEnv): ModelSpec {
  const toolMode = env.HARNESS_TOOL_MODE || config.toolMode;
  if (toolMode !== undefined && !(TOOL_MODE_SETTINGS as readonly string[]).includes(toolMode)) {
    throw new UsageError(`tool mode "${toolMode}" is not one of ${TOOL_MODE_SETTINGS.join(', ')}`, 'set HARNESS_TOOL_MODE (or toolMode in the config file) to auto, native or text');
  }
  return toolMode ? { ...spec, toolMode: toolMode as ToolModeSetting } : spec;
}

/** A policy mode given by flag or environment, checked. */
function policyMode(mode: string | undefined): string | undefined {
  if (mode !== undefined && !(POLICY_MODES as readonly string[]).includes(mode)) {
    throw new UsageError(`policy mode "${mode}" is not one of ${POLICY_MODES.join(', ')}`, 'use --policy strict|ask|auto (or HARNESS_POLICY)');
  }
  return mode;
}

/** What a session sets whatever its agent: its memory, compression and network reach. */
function sessionSettings(config: FileConfig, env: NodeJS.ProcessEnv): Pick<SessionConfig, 'memory' | 'compression' | 'network'> {
  const memory = { namespace: env.HARNESS_MEMORY_NAMESPACE || config.memory?.namespace || 'default', preload: config.memory?.preload ?? 5 };
  const compression: CompressionConfig = { ...DEFAULT_COMPRESSION, ...(config.compression ?? {}) };
  const network = config.network?.allowPrivateHosts.length ? { network: { allowPrivateHosts: config.network.allowPrivateHosts } } : {};
  return { memory, compression, ...network };
}

/**
 * The policy a session is fixed with: the file's policy and mode (or the flag's) and the default
 * rules written out (freezePolicy). What MCP server entries decide for their tools is applied per
 * discovered tool in the turn (deterministic/mcp-tools.ts mcpRules).
 */
function effectivePolicy(config: FileConfig, mode: string | undefined): Policy {
  return freezePolicy(parsePolicy({ ...(config.policy ?? {}), ...(mode ? { mode } : {}) }));
}

/** The MCP servers of the config file (for `harness mcp`: no model needed); `note` as for resolveSessionConfig. */
export function resolveMcpConfig(flags: ConfigFlags, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd(), note?: (line: string) => void): { servers: McpServerSpec[]; policy: Policy; file?: string } {
  const loaded = loadFileConfig(flags.config, env, cwd);
  const { config, file } = loaded;
  const ignored = ignoredNote(loaded, cwd);
  if (ignored) note?.(ignored);
  const servers = resolveMcpServers(config.mcpServers, file ? path.dirname(file) : cwd);
  return { servers, policy: effectivePolicy(config, flags.policy ?? env.HARNESS_POLICY), ...(file ? { file } : {}) };
}

/** `scripted:<file>` loads and validates the script now, so a bad file fails before anything starts. */
export function modelSpec(text: string, baseDir: string, baseUrl: string | undefined): ModelSpec {
  if (text.startsWith('scripted:')) {
    const file = path.resolve(baseDir, text.slice('scripted:'.length));
    try {
      return { provider: 'scripted', model: 'scripted', script: loadScript(file) };
    } catch (err) {
      if (err instanceof ScriptError) throw new UsageError(err.message, 'see docs/models.md, "Scripted model", for the script format');
      throw err;
    }
  }
  if (text === 'scripted') throw new UsageError('--model scripted needs a script: scripted:<file>');
  return { provider: 'openai', model: text, ...(baseUrl ? { baseUrl } : {}) };
}
