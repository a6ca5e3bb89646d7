/**
 * Which configuration a command's message carries: a new session is started with the
 * resolved config; an existing one keeps the config it started with (replay sees the same).
 */
import type { Client } from '@temporalio/client';
import type { SessionConfig } from '../deterministic/session-config';
import { NO_MODEL, resolveSessionConfig } from '../config/resolve';
import { UsageError, UserError } from '../machine/errors';
import { sessionExists } from '../client/session-client';
import type { CliContext } from './context';
import { say } from './output';
import path from 'node:path';

/** Flags that shape a new session. */
interface SessionFlags {
  session?: string;
  model?: string;
  config?: string;
  policy?: string;
  /** The worker's agent a new session runs as. */
  agent?: string;
}

function resolve(ctx: CliContext, o: SessionFlags): SessionConfig {
  return resolveSessionConfig(
    { ...(o.model ? { model: o.model } : {}), ...(o.config ? { config: o.config } : {}), ...(o.policy ? { policy: o.policy } : {}), ...(o.agent !== undefined ? { agent: o.agent } : {}) },
    ctx.env,
    process.cwd(),
    say,
  );
}

/**
 * Resolves before connecting when the session is surely new, so mistakes fail before anything
 * starts. A named config file is what a background worker started now declares from.
 */
export function configForNew(ctx: CliContext, o: SessionFlags): SessionConfig | undefined {
  if (o.config) ctx.configFile = path.resolve(o.config);
  if (o.session) return undefined;
  return resolve(ctx, o);
}

/** The config to start `sessionId` with, or undefined when it already exists. */
export async function configFor(ctx: CliContext, client: Client, sessionId: string, o: SessionFlags, early?: SessionConfig): Promise<SessionConfig | undefined> {
  if (early) return early;
  if (await sessionExists(client, sessionId)) {
    if (o.model || o.config || o.policy || o.agent !== undefined) {
      throw new UsageError(
        `session ${sessionId} already exists and keeps the model and settings it started with`,
        'drop --model/--config/--policy/--agent to continue it, or start a new session',
      );
    }
    return undefined;
  }
  try {
    return resolve(ctx, o);
  } catch (err) {
    // Nothing says which model a new session would run: the session was meant to exist.
    if (err instanceof UserError && err.message === NO_MODEL) {
      throw new UserError(`no session named ${sessionId}`, '`harness sessions` lists them; to start a new session with this name, give it a model with --model');
    }
    throw err;
  }
}
