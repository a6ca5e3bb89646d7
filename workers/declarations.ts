/**
 * The declarations of one worker, assembled the same way for `harness worker` and
 * createHarnessWorker: its environment (model endpoints bound to keys, HARNESS_SKILLS_DIRS), its
 * config file (named by `config`/HARNESS_CONFIG, or a trusted ./harness.config.json) and what the
 * code passes. Only the owner of the worker writes any of these; sessions name what they declare.
 */
import path from 'node:path';
import { WorkerDeclarations } from '../activities/declarations';
import { declaredByConfig } from '../config/declarations';
import { mcpServersSchema, resolveMcpServers } from '../config/mcp';
import { UsageError } from '../machine/errors';

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
  return WorkerDeclarations.fromEnv(env, {
    mcpServers: [...(file.mcpServers ?? []), ...fromCode],
    modelEndpoints: [...(file.modelEndpoints ?? []), ...(opts.modelEndpoints ?? [])],
    skillFolders: [...(file.skillFolders ?? []), ...(opts.skillFolders ?? []).map((f) => path.resolve(cwd, f))],
    privateHosts: [...(file.privateHosts ?? []), ...(opts.allowPrivateHosts ?? [])],
  });
}
