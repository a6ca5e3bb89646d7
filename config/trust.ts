/**
 * Trust for config files found in the working directory. Running `harness` inside a checkout
 * someone else wrote must not let its harness.config.json redirect the model (and the traffic
 * of the session) elsewhere, replace the model with a script, loosen the permission policy,
 * mount host folders into the sandbox, open private network addresses, start MCP servers, declare
 * agents, or raise what a session may spend. Those settings of such a file are used only when trusted: named explicitly
 * (--config, HARNESS_CONFIG) or recorded with `harness trust`, which stores its path and a hash
 * of its content outside the working directory, so an edited file is untrusted again.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FileConfig } from './resolve';
import { DEFAULT_LIMITS } from '../deterministic/session-config';
import { DEFAULT_COMPRESSION } from '../deterministic/context/plan';

/** One trusted file: where it is and what it contained when it was trusted. */
interface TrustEntry {
  path: string;
  sha256: string;
  trustedAt: string;
}

/** The trust list: `$XDG_CONFIG_HOME/harness/trusted.json` (default ~/.config), never in a project. */
export function trustFile(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || path.join(env.HOME || os.homedir(), '.config');
  return path.join(base, 'harness', 'trusted.json');
}

/** The SHA-256 of a file's bytes. */
function fileHash(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

function readTrust(env: NodeJS.ProcessEnv): TrustEntry[] {
  try {
    const list = JSON.parse(readFileSync(trustFile(env), 'utf8')) as unknown;
    return Array.isArray(list) ? (list as TrustEntry[]).filter((e) => typeof e?.path === 'string' && typeof e?.sha256 === 'string') : [];
  } catch {
    return [];
  }
}

/** Whether this file, with exactly its current content, was trusted. */
export function isTrusted(file: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const hash = fileHash(file);
  const full = path.resolve(file);
  return readTrust(env).some((e) => e.path === full && e.sha256 === hash);
}

/** Records the file (its current content) as trusted; replaces an earlier entry for the same path. */
export function trust(file: string, env: NodeJS.ProcessEnv = process.env, now = new Date()): TrustEntry {
  const full = path.resolve(file);
  const entry: TrustEntry = { path: full, sha256: fileHash(full), trustedAt: now.toISOString() };
  const list = [...readTrust(env).filter((e) => e.path !== full), entry];
  const target = trustFile(env);
  mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
  // Write then rename: a crash never leaves a half-written list (which would trust nothing).
  const tmp = `${target}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(list, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, target);
  return entry;
}

/** The limits a file may lower but, untrusted, not raise: each spends more (steps, tokens, time held). */
const RAISABLE_LIMITS = {
  maxSteps: DEFAULT_LIMITS.maxSteps,
  errorLimit: DEFAULT_LIMITS.errorLimit,
  repeatLimit: DEFAULT_LIMITS.repeatLimit,
  askUserTimeoutSec: DEFAULT_LIMITS.askUserTimeoutMs / 1000,
  approvalTimeoutSec: DEFAULT_LIMITS.approvalTimeoutMs / 1000,
  modelTimeoutSec: DEFAULT_LIMITS.modelTimeoutMs / 1000,
  modelMaxAttempts: DEFAULT_LIMITS.modelMaxAttempts,
  modelRetryWindowSec: DEFAULT_LIMITS.modelRetryWindowMs! / 1000,
  maxOutputTokens: DEFAULT_LIMITS.maxOutputTokens!,
} as const;

/** A config file with what only a trusted file may set taken out, and what was taken, in words. */
interface TrustedPart {
  config: FileConfig;
  ignored: string[];
}

/**
 * Splits a config file into what any file may set and what only a trusted one may: each of the
 * latter changes where requests go, what runs without a human, what the sandbox and the network
 * reach, or what a session may spend (the model and its price, limits above the defaults, the
 * instructions the model follows).
 */
export function trustedPart(file: FileConfig): TrustedPart {
  const config: FileConfig = structuredClone(file);
  const ignored: string[] = [];
  const drop = (key: keyof FileConfig, why: string) => {
    if (config[key] === undefined) return;
    delete config[key];
    ignored.push(why);
  };
  // A script file instead of a model: the checkout, not a model, would choose every tool call.
  if (config.model !== undefined && /^scripted(:|$)/.test(config.model)) drop('model', `model ${JSON.stringify(config.model)} (replays a script file as the model: it chooses every tool call)`);
  drop('model', `model ${JSON.stringify(config.model)} (chooses the model, and with it what every step costs)`);
  drop('baseUrl', `baseUrl (sends the model's requests to ${config.baseUrl})`);
  drop('prices', 'prices (what the ledger, `harness cost` and USD budgets charge)');
  drop('systemPrompt', 'systemPrompt (the instructions every model call starts with)');
  drop('toolMode', 'toolMode (how the model is offered the tools)');
  const limits = config.limits;
  for (const [key, ceiling] of Object.entries(RAISABLE_LIMITS) as Array<[keyof typeof RAISABLE_LIMITS, number]>) {
    const value = limits?.[key];
    if (value === undefined || value <= ceiling) continue;
    delete limits![key];
    ignored.push(`limits.${key} ${value} (above the default ${ceiling})`);
  }
  const window = config.compression?.contextWindow;
  if (window !== undefined && window > DEFAULT_COMPRESSION.contextWindow) {
    delete config.compression!.contextWindow;
    ignored.push(`compression.contextWindow ${window} (above the default ${DEFAULT_COMPRESSION.contextWindow}: longer prompts before compressing)`);
  }
  const p = config.policy;
  if (p) {
    if (p.mode === 'auto') {
      delete (p as { mode?: unknown }).mode;
      ignored.push('policy.mode auto (runs every call no rule denies, without asking)');
    }
    if (p.defaults === false) {
      delete (p as { defaults?: unknown }).defaults;
      ignored.push('policy.defaults false (drops the built-in deny rules)');
    }
    const allows = (p.rules ?? []).filter((r) => r.decision === 'allow').length;
    if (allows) {
      p.rules = p.rules!.filter((r) => r.decision !== 'allow');
      ignored.push(`policy.rules (${allows} allow rule${allows === 1 ? '' : 's'}: calls that run without asking)`);
    }
  }
  if (config.skills?.folders.length) drop('skills', 'skills.folders (mounts host folders into the sandbox)');
  if (config.network?.allowPrivateHosts.length) drop('network', 'network.allowPrivateHosts (lets http_request reach private addresses)');
  const servers = Object.keys(config.mcpServers ?? {});
  if (servers.length) drop('mcpServers', `mcpServers (starts ${servers.join(', ')} on the worker and offers their tools)`);
  const agents = Object.keys(config.agents ?? {});
  if (agents.length) drop('agents', `agents (${agents.join(', ')}: their instructions, models, tools and MCP servers, served by a worker started with this file)`);
  if (config.memory?.namespace !== undefined) {
    ignored.push(`memory.namespace (reads and writes the long-term memories of "${config.memory.namespace}")`);
    delete config.memory.namespace;
  }
  return { config, ignored };
}

/** What a config file sets that only a trusted file may, in words (`harness trust` lists them). */
export function sensitiveSettings(config: FileConfig): string[] {
  return trustedPart(config).ignored;
}
