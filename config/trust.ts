/**
 * Trust for config files found in the working directory. Running `harness` inside a checkout
 * someone else wrote must not let its harness.config.json redirect the model (and the traffic
 * of the session) elsewhere, replace the model with a script, loosen the permission policy,
 * mount host folders into the sandbox or open private network addresses. Such a file is used only when trusted: named explicitly
 * (--config, HARNESS_CONFIG) or recorded with `harness trust`, which stores its path and a hash
 * of its content outside the working directory, so an edited file is untrusted again.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FileConfig } from './resolve';

/** One trusted file: where it is and what it contained when it was trusted. */
export interface TrustEntry {
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
export function fileHash(file: string): string {
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

/**
 * The settings of a config file that only a trusted file may make, in words: each one changes
 * where requests go, what runs without a human, or what the sandbox and the network reach.
 */
export function sensitiveSettings(config: FileConfig): string[] {
  const out: string[] = [];
  // A script file instead of a model: the checkout, not a model, would choose every tool call.
  if (config.model !== undefined && /^scripted(:|$)/.test(config.model)) out.push(`model ${JSON.stringify(config.model)} (replays a script file as the model: it chooses every tool call)`);
  if (config.baseUrl !== undefined) out.push(`baseUrl (sends the model's requests to ${config.baseUrl})`);
  const p = config.policy;
  if (p) {
    if (p.mode === 'auto') out.push('policy.mode auto (runs every call no rule denies, without asking)');
    if (p.defaults === false) out.push('policy.defaults false (drops the built-in deny rules)');
    const allows = (p.rules ?? []).filter((r) => r.decision === 'allow').length;
    if (allows) out.push(`policy.rules (${allows} allow rule${allows === 1 ? '' : 's'}: calls that run without asking)`);
  }
  if (config.skills?.folders.length) out.push('skills.folders (mounts host folders into the sandbox)');
  if (config.network?.allowPrivateHosts.length) out.push('network.allowPrivateHosts (lets http_request reach private addresses)');
  const servers = Object.keys(config.mcpServers ?? {});
  if (servers.length) out.push(`mcpServers (starts ${servers.join(', ')} on the worker and offers their tools)`);
  if (config.memory?.namespace !== undefined) out.push(`memory.namespace (reads and writes the long-term memories of "${config.memory.namespace}")`);
  return out;
}
