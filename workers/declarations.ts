/**
 * The declarations of one worker, assembled the same way for `harness worker` and
 * createHarnessWorker: its environment (model endpoints bound to keys, HARNESS_SKILLS_DIRS), its
 * config file (named by `config`/HARNESS_CONFIG, or a trusted ./harness.config.json) and what the
 * code passes (agents among them). Only the owner of the worker writes any of these; sessions name
 * what they declare.
 */
import path from 'node:path';
import { WorkerDeclarations } from '../activities/declarations';
import { declaredByConfig } from '../config/declarations';
import { mcpServersSchema, resolveMcpServers } from '../config/mcp';
import { UsageError } from '../machine/errors';
import { checkSubAgents, withGivenSubAgents, type AgentSpec, type HarnessAgent } from '../config/agents';
import { canonicalJson } from '../deterministic/digest';
import type { McpServerSpec } from '../deterministic/mcp';
import type { WebhookDeclaration } from '../deterministic/webhook';

/** What code declares beside the config file (the shapes of harness.config.json). */
export interface DeclarationOptions {
  /** A config file whose declarations the worker loads (default HARNESS_CONFIG, else a trusted ./harness.config.json). */
  config?: string;
  /** MCP servers, as in the config file's `mcpServers` (`command`/`args`/`env`, or `url`/`headers`). */
  mcpServers?: Record<string, unknown>;
  /** Model endpoints (base URLs) sessions may name, beside OPENAI_BASE_URL and the providers keys are bound to. */
  modelEndpoints?: readonly string[];
  /** Skills folders sessions may name. */
  skillFolders?: readonly string[];
  /** `host:port` entries of a session's network.allowPrivateHosts that http_request may open. */
  allowPrivateHosts?: readonly string[];
  /** Agents made with defineAgent; their MCP servers and skills folders are declared with them, their tools join the worker's. */
  agents?: readonly HarnessAgent[];
  /**
   * Webhooks sessions may name (`notify: { url }`): each URL with the name of the secret that signs
   * its posts, `env:NAME` (read from the worker's environment; never in history).
   */
  webhooks?: readonly WebhookDeclaration[];
  /**
   * Run only sessions that name one of `agents` (default HARNESS_REQUIRE_AGENT=1, else false): a
   * session input naming none is refused at its first step (AGENT_REQUIRED). Without it, such a
   * session runs as the default agent, offered only the worker's own `tools`, never an agent's.
   */
  requireAgent?: boolean;
}

/** The worker's declarations; a bad entry in code is a UsageError naming the field, before anything connects. */
export function workerDeclarations(env: NodeJS.ProcessEnv, cwd: string, opts: DeclarationOptions = {}, log?: (line: string) => void): WorkerDeclarations {
  const file = declaredByConfig(opts.config, env, cwd, log);
  const parsed = mcpServersSchema.safeParse(opts.mcpServers ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new UsageError(`mcpServers.${issue.path.join('.')}: ${issue.message}`, 'declare each server as in harness.config.json: { command, args, env } or { url, headers }');
  }
  const fromCode = resolveMcpServers(opts.mcpServers, cwd);
  const twice = fromCode.filter((s) => file.mcpServers?.some((f) => f.name === s.name));
  if (twice.length) throw new UsageError(`MCP server "${twice[0]!.name}" is declared both in code and in ${file.file}`, 'declare each server once');
  const servers = [...(file.mcpServers ?? []), ...fromCode];
  const agents = [...(file.agents ?? []).map((spec) => ({ spec, from: file.file ?? 'the config file' })), ...codeAgents(opts.agents)];
  checkAgents(agents, servers);
  checkSubAgents(agents.map((a) => a.spec));
  return WorkerDeclarations.fromEnv(env, {
    mcpServers: servers,
    modelEndpoints: [...(file.modelEndpoints ?? []), ...(opts.modelEndpoints ?? [])],
    skillFolders: [...(file.skillFolders ?? []), ...(opts.skillFolders ?? []).map((f) => path.resolve(cwd, f))],
    privateHosts: [...(file.privateHosts ?? []), ...(opts.allowPrivateHosts ?? [])],
    agents: agents.map((a) => a.spec),
    webhooks: checkWebhooks(opts.webhooks),
  });
}

/** The agents given in code, each from defineAgent. */
function codeAgents(agents: readonly HarnessAgent[] | undefined): Array<{ spec: AgentSpec; from: string }> {
  return withGivenSubAgents(agents ?? []).map((a) => {
    if (!a?.spec || !Array.isArray(a.tools)) throw new UsageError('every agent must come from defineAgent({ name, instructions, model, ... })');
    return { spec: a.spec, from: 'code' };
  });
}

/** Each agent named once, and each MCP server of an agent the same as any other of its name. */
function checkAgents(agents: ReadonlyArray<{ spec: AgentSpec; from: string }>, servers: readonly McpServerSpec[]): void {
  const seen = new Map<string, string>();
  const known = new Map(servers.map((s) => [s.name, { spec: s, from: 'the worker' }]));
  for (const { spec, from } of agents) {
    const had = seen.get(spec.name);
    if (had) throw new UsageError(`agent "${spec.name}" is declared twice (${had === from ? `in ${from}` : `in ${had} and in ${from}`})`, 'declare each agent once');
    seen.set(spec.name, from);
    for (const s of spec.mcpServers) {
      const other = known.get(s.name);
      if (other && canonicalJson(other.spec) !== canonicalJson(s)) {
        throw new UsageError(`MCP server "${s.name}" of agent "${spec.name}" differs from the one of that name declared by ${other.from}`, 'give each server one definition (the same entry for every agent that uses it)');
      }
      if (!other) known.set(s.name, { spec: s, from: `agent "${spec.name}"` });
    }
  }
}

/** The webhooks given in code: each an http(s) URL with a secret named `env:NAME`. */
function checkWebhooks(webhooks: readonly WebhookDeclaration[] | undefined): WebhookDeclaration[] {
  return (webhooks ?? []).map((w, i) => {
    const problem = webhookProblem(w);
    if (problem) throw new UsageError(`webhooks[${i}]: ${problem}`, "declare each as { url: 'https://…', secret: 'env:NAME' }");
    return { url: w.url, secret: w.secret };
  });
}

/** What is wrong with a webhook declaration (its URL, its secret's name), or undefined. */
export function webhookProblem(w: WebhookDeclaration | undefined): string | undefined {
  if (!w || typeof w !== 'object') return 'a webhook is { url, secret }';
  let protocol = '';
  try {
    protocol = new URL(w.url).protocol;
  } catch {
    return `url ${JSON.stringify(w.url)} is not a URL`;
  }
  if (protocol !== 'https:' && protocol !== 'http:') return `url ${JSON.stringify(w.url)} is not http(s)`;
  if (typeof w.secret !== 'string' || !/^env:[A-Za-z_][A-Za-z0-9_]*$/.test(w.secret)) return 'secret must name an environment variable of the worker: env:NAME (the secret itself never goes in a declaration)';
  return undefined;
}
