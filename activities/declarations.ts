/**
 * What this worker's owner declared may run or be reached from the worker's host, outside the
 * sandbox: MCP servers (their commands, environments, URLs), model endpoints, skills folders
 * (mounted into sandboxes) and the private `host:port`s http_request may reach. They come from the
 * owner only: code (`createHarnessWorker`), the worker's environment, or a config file the owner
 * named or trusted (config/declarations.ts); and the agents sessions may run as, whose servers and
 * folders are declared with them. A session's input, which anyone who can reach the
 * Temporal server may write, only names what is declared here; naming anything else is refused
 * before it starts, with a NOT_DECLARED failure that says what the worker declares instead.
 */
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { parseHostEntry } from '../deterministic/allow-hosts';
import { canonicalJson } from '../deterministic/digest';
import { NOT_DECLARED, NOT_DECLARED_HINT } from '../deterministic/errors';
import type { McpServerRef, McpServerSpec } from '../deterministic/mcp';
import type { Declared } from '../config/declarations';
import type { AgentSpec } from '../config/agents';
import { projectRoot } from '../machine/paths';
import { DEFAULT_MODEL_ENDPOINT, keyBoundHosts } from './model/keys';
import type { WebhookDeclaration } from '../deterministic/webhook';




/** The declarations of one worker, checked by the activities that start or reach something. */
export class WorkerDeclarations {
  private readonly servers: Map<string, McpServerSpec>;
  /** Origins: `scheme://host[:port]`. */
  private readonly endpoints: Set<string>;
  private readonly folders: Set<string>;
  /** `host:port` in the guard's normal form. */
  private readonly hosts: Set<string>;
  /** The agents sessions may run as, by name. */
  private readonly agents: Map<string, AgentSpec>;
  /** Webhooks by their exact URL. */
  private readonly webhooks: Map<string, WebhookDeclaration>;
  /**
   * What a session naming no agent gets: the worker's own custom tools (undefined: every one, for
   * declarations built without a worker), or nothing when the worker runs only its agents' sessions.
   */
  private agentless: { tools?: readonly string[]; required: boolean } = { required: false };

  constructor(declared: Declared = {}) {
    this.webhooks = new Map();
    this.servers = new Map();
    this.endpoints = new Set();
    this.folders = new Set();
    this.hosts = new Set();
    this.agents = new Map();
    this.add(declared);
  }

  /**
   * The declarations every worker has from its environment: the default endpoint and the ones keys
   * are bound to (OPENAI_BASE_URL, api.deepseek.com, HARNESS_MODEL_KEYS hosts), the project's
   * skills/ and HARNESS_SKILLS_DIRS. The environment is the owner's: whoever sets it runs the worker.
   */
  static fromEnv(env: Record<string, string | undefined>, more: Declared = {}): WorkerDeclarations {
    // A host a key is bound to is one the owner meant requests to go to (keys go over https only).
    const keyed = keyBoundHosts(env).map((host) => `https://${host}`);
    const skillsDirs = (env.HARNESS_SKILLS_DIRS ?? '').split(path.delimiter).filter(Boolean);
    return new WorkerDeclarations({
      mcpServers: more.mcpServers ?? [],
      modelEndpoints: [DEFAULT_MODEL_ENDPOINT, ...(env.OPENAI_BASE_URL ? [env.OPENAI_BASE_URL] : []), ...keyed, ...(more.modelEndpoints ?? [])],
      skillFolders: [path.join(projectRoot(), 'skills'), ...skillsDirs, ...(more.skillFolders ?? [])],
      privateHosts: more.privateHosts ?? [],
      agents: more.agents ?? [],
      webhooks: more.webhooks ?? [],
    });
  }

  /** Declares more, after the worker started (a test's own servers; an app that learns an endpoint late). */
  add(more: Declared): void {
    for (const s of more.mcpServers ?? []) this.servers.set(s.name, s);
    for (const u of more.modelEndpoints ?? []) {
      const o = origin(u);
      if (o) this.endpoints.add(o);
    }
    for (const f of more.skillFolders ?? []) this.folders.add(path.resolve(f));
    for (const h of more.privateHosts ?? []) {
      const key = hostKey(h);
      if (key) this.hosts.add(key);
    }
    for (const w of more.webhooks ?? []) this.webhooks.set(w.url, w);
    // An agent's servers, folders and webhook are declared with it.
    for (const a of more.agents ?? []) {
      this.agents.set(a.name, a);
      if (a.notify) this.webhooks.set(a.notify.url, a.notify);
      for (const s of a.mcpServers) this.servers.set(s.name, s);
      for (const f of a.skills) this.folders.add(path.resolve(f));
    }
  }

  /** Sessions naming no agent run as the default agent, with these tools; or, `required`, not at all. */
  setDefaultAgent(tools: readonly string[], required: boolean): void {
    this.agentless = { tools: [...tools], required };
  }

  /** The custom tools of a session naming no agent (undefined: every tool of the worker). */
  defaultAgentTools(): readonly string[] | undefined {
    return this.agentless.tools;
  }

  /** Whether the worker runs only sessions that name one of its agents. */
  agentRequired(): boolean {
    return this.agentless.required;
  }

  /** The names of the agents sessions may run as. */
  agentNames(): string[] {
    return [...this.agents.keys()];
  }

  /** The agents sessions may run as. */
  agentSpecs(): AgentSpec[] {
    return [...this.agents.values()];
  }

  /** The agent of that name, if the worker has it. */
  agent(name: string): AgentSpec | undefined {
    return this.agents.get(name);
  }

  /** The names of the declared MCP servers. */
  mcpServerNames(): string[] {
    return [...this.servers.keys()];
  }

  /**
   * The declared server a session names, with the session's settings for its tools (timeouts,
   * risk, decision). A reference that carries a command or URL (a session from before servers were
   * declared) is served only when they are exactly the declaration's.
   */
  mcpServer(ref: McpServerRef): McpServerSpec {
    const declared = this.servers.get(ref.name);
    const names = this.mcpServerNames();
    const known = names.length ? `it declares ${names.join(', ')}` : 'it declares none';
    if (!declared) throw notDeclared(`MCP server "${ref.name}" is not declared on this worker (${known})`);
    if (carriesHostFields(ref) && canonicalJson(hostFields(ref)) !== canonicalJson(hostFields(declared))) {
      throw notDeclared(`MCP server "${ref.name}" as this session names it (its command, URL or environment) differs from the worker's declaration`);
    }
    return { ...declared, startupTimeoutMs: ref.startupTimeoutMs, callTimeoutMs: ref.callTimeoutMs };
  }

  /** Refuses a model endpoint the worker did not declare (no request is sent to it). */
  checkModelEndpoint(baseUrl: string | undefined): void {
    const url = baseUrl ?? DEFAULT_MODEL_ENDPOINT;
    const o = origin(url);
    if (o && this.endpoints.has(o)) return;
    throw notDeclared(`the model endpoint ${o ?? JSON.stringify(url)} is not declared on this worker (it declares ${[...this.endpoints].join(', ')})`);
  }

  /** Refuses skills folders the worker did not declare (they would be mounted into the sandbox). */
  checkSkillFolders(folders: readonly string[] | undefined): void {
    const missing = (folders ?? []).filter((f) => !this.folders.has(path.resolve(f)));
    if (missing.length) throw notDeclared(`the skills folder${missing.length === 1 ? '' : 's'} ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not declared on this worker`);
  }

  /** The entries of a session's `network.allowPrivateHosts` that the worker declared; the others open nothing. */
  declaredPrivateHosts(entries: readonly string[] | undefined): string[] {
    return (entries ?? []).filter((e) => {
      const key = hostKey(e);
      return key !== undefined && this.hosts.has(key);
    });
  }

  /**
   * The declared webhook a session names by its URL (exactly as declared): nothing is sent to a
   * URL a session's input made up, so an input cannot point the worker at an arbitrary host.
   */
  webhook(url: string): WebhookDeclaration {
    const declared = this.webhooks.get(url);
    if (declared) return declared;
    const n = this.webhooks.size;
    throw notDeclared(`the webhook ${JSON.stringify(url)} is not declared on this worker (${n ? `it declares ${n} webhook${n === 1 ? '' : 's'}` : 'it declares none'})`);
  }

  /** One line for the worker's start: what it declared beyond the defaults. */
  describe(): string {
    const parts = [
      this.servers.size ? `mcp servers ${this.mcpServerNames().join(',')}` : '',
      `model endpoints ${[...this.endpoints].join(',')}`,
      this.folders.size ? `skills folders ${[...this.folders].join(',')}` : '',
      this.hosts.size ? `private hosts ${[...this.hosts].join(',')}` : '',
      this.agents.size ? `agents ${this.agentNames().join(',')}` : '',
      this.webhooks.size ? `webhooks ${this.webhooks.size}` : '',
    ];
    return parts.filter(Boolean).join('; ');
  }
}

/** The refusal of something a session named that the worker did not declare: one line, then where to declare it. */
function notDeclared(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(`${message}: ${NOT_DECLARED_HINT}`, NOT_DECLARED);
}

function carriesHostFields(ref: McpServerRef): boolean {
  return ref.command !== undefined || ref.url !== undefined;
}

/** What of a server runs or is reached: the part a session may not choose. */
function hostFields(s: McpServerRef): Record<string, unknown> {
  if (s.url !== undefined) return { url: s.url, headers: s.headers ?? {} };
  return { command: s.command, args: s.args ?? [], env: s.env ?? {}, cwd: s.cwd ?? null };
}

/** `scheme://host[:port]` of a URL (default ports dropped), or undefined for text that is not one. */
function origin(url: string): string | undefined {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin.toLowerCase() : undefined;
  } catch {
    return undefined;
  }
}

/** `host:port` in the guard's normal form, or undefined for an entry without a port. */
function hostKey(entry: string): string | undefined {
  const parsed = parseHostEntry(entry);
  if (!parsed || parsed.port === undefined) return undefined;
  return `${parsed.host.includes(':') && !parsed.host.startsWith('[') ? `[${parsed.host}]` : parsed.host}:${parsed.port}`;
}
