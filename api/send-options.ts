/**
 * What send() and run() take, and the configuration a new session starts with: resolved from
 * the options, the environment and a trusted config file, or the session's own when it exists.
 */
import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { z } from 'zod';
import type { SessionConfig } from '../deterministic/session-config';
import type { HarnessAgent } from '../config/agents';
import { UsageError } from '../machine/errors';
import type { SessionMetadata } from '../deterministic/metadata';
import type { TroubleWait } from '../client/trouble-wait';
import { sessionExists } from '../client/session-client';
import type { OutputSpec } from '../deterministic/output';
import type { WhileRunning } from '../deterministic/messages';

/** A message for a session: which session, and for a new one how to start it. `O`: the type of its turns' `output`. */
export interface SendOptions<O = unknown> {
  /** Continue this session, or start it under this id (default: a new session). */
  sessionId?: string;
  /**
   * New sessions: run as this agent of the worker (createHarnessWorker's `agents`, its config
   * file's): the worker gives the model, instructions, policy, limits, MCP servers, skills and
   * tools, and the config file's and environment's are not used. `model`, `policy`,
   * `systemPrompt` and `requireTools` may only narrow the agent's (the same model, a stricter
   * mode, some of its tools): anything else refuses the session (AGENT_MISMATCH). The agent
   * itself (defineAgent's value) names it too, and types `result.output` by its `output`.
   */
  agent?: string | HarnessAgent<O>;
  /** New sessions: the model (`gpt-4o-mini`, `scripted:<file>`; default HARNESS_MODEL or the config file's). */
  model?: string;
  /** New sessions: the policy mode (default `ask`, or HARNESS_POLICY, or the config file's). */
  policy?: 'strict' | 'ask' | 'auto';
  /** New sessions: a config file (default ./harness.config.json when trusted). */
  configFile?: string;
  /** New sessions: the system prompt, in place of the config's. */
  systemPrompt?: string;
  /** New sessions: custom tools the session cannot do without; its first turn fails, naming them, on a worker that lacks one. */
  requireTools?: readonly string[];
  /**
   * New sessions: JSON the session carries for its custom tools (a user id, a tenant …; at most
   * 16 KiB), which they read as `ctx.metadata`. It is never put into the model's messages.
   */
  metadata?: SessionMetadata;
  /**
   * New sessions: structured output, a zod object schema every turn's final answer must match
   * (an answer that does not is sent back to the model, limits.outputRetries times, then the turn
   * fails with OUTPUT_INVALID); `result.output` is the validated object, typed by the schema. An
   * agent's session may name the agent's own schema only.
   */
  output?: z.ZodType<O>;
  /** Step limit of this turn. */
  maxSteps?: number;
  /**
   * A session whose turn is running: `queue` (the default) gives the message to that turn's model
   * at its next step, `interrupt` also cancels the calls of its current step, `reject` refuses it.
   */
  whileRunning?: WhileRunning;
  /** @internal The configuration already resolved (the CLI resolves it before connecting); null: the session exists, send none. */
  config?: SessionConfig | null;
  /** @internal How the CLI rides out outages while sending. */
  troubleWait?: TroubleWait;
}

/** Where a client resolves a new session's configuration from. */
interface Where {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  onNote?: (line: string) => void;
}

/** The configuration a new session starts with; undefined for one that exists (it keeps its own). */
export async function newSessionConfig(temporal: Client, sessionId: string, o: SendOptions, from: Where): Promise<SessionConfig | undefined> {
  const shaping =
    o.model !== undefined || o.policy !== undefined || o.configFile !== undefined || o.systemPrompt !== undefined || o.requireTools !== undefined || o.metadata !== undefined || o.agent !== undefined || o.output !== undefined;
  if (o.sessionId && (await sessionExists(temporal, sessionId))) {
    if (shaping) throw existingSession(sessionId);
    return undefined;
  }
  const flags = { ...(o.model ? { model: o.model } : {}), ...(o.configFile ? { config: o.configFile } : {}), ...(o.policy ? { policy: o.policy } : {}), ...(o.agent !== undefined ? { agent: typeof o.agent === 'string' ? o.agent : o.agent.name } : {}) };
  // Loaded only for a new session: the config's schemas (zod, the policy) cost a client that only
  // reads or decides (`harness status`, `approve`) ~0.1 s of CPU to load.
  const { resolveSessionConfig } = await import('../config/resolve');
  const config = resolveSessionConfig(flags, from.env ?? process.env, from.cwd ?? process.cwd(), from.onNote);
  const required = [...(o.requireTools ?? [])];
  if (required.some((t) => typeof t !== 'string' || t === '')) throw new UsageError('requireTools must be tool names');
  // Of an agent's session, what is set here is the session's own choice, which the worker checks.
  const agentSet = config.agentSet ? { agentSet: [...config.agentSet, ...(o.systemPrompt !== undefined ? ['systemPrompt' as const] : []), ...(required.length ? ['tools' as const] : [])] } : {};
  const output = o.output === undefined ? undefined : await outputSpec(o.output);
  return { ...config, ...(o.systemPrompt !== undefined ? { systemPrompt: o.systemPrompt } : {}), ...(required.length ? { tools: { required } } : {}), ...agentSet, ...(output ? { output } : {}) };
}

/** Settings given for a session that exists: it keeps those it started with. */
export function existingSession(sessionId: string): UsageError {
  return new UsageError(`session ${sessionId} already exists and keeps the settings it started with`, 'drop agent, model, policy, configFile, systemPrompt, requireTools, metadata and output to continue it');
}

/** The JSON schema a session records for an output schema; a schema that cannot be one is a UsageError. */
async function outputSpec(schema: unknown): Promise<OutputSpec> {
  // Loaded only for a session with structured output (zod's JSON schema conversion).
  const { outputSpecOf } = await import('./output');
  const spec = outputSpecOf(schema);
  if ('problem' in spec) throw new UsageError(spec.problem, 'give a zod object schema of JSON types (z.object({ ... })), at most 16 KiB as JSON schema');
  return spec;
}

/** A new session id (the CLI's too): sortable by time, unique enough for one user. */
export function newSessionId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `s-${stamp}-${randomBytes(3).toString('hex')}`;
}
