/** What every command needs: settings, HARNESS_HOME, a client (starting the embedded server if allowed). */
import os from 'node:os';
import type { Client } from '@temporalio/client';
import type { HarnessClient } from '../api/client';
import { openHome } from '../machine/home';
import { temporalSettings, type TemporalSettings } from '../client/temporal-settings';
import { say } from './output';

/** Per-invocation context. */
export interface CliContext {
  /** Read on first use: a bad value is a usage error of the command that needs it, never of `--help`. */
  readonly settings: TemporalSettings;
  /** HARNESS_HOME, checked to be this user's on first use (machine/home.ts): a refused one throws a UserError. */
  readonly home: string;
  env: NodeJS.ProcessEnv;
  /**
   * A connected client; `autostart` brings up the embedded server and worker when needed;
   * `waits`: the command rides out an unreachable server itself, so no connection is tried first
   * (client/temporal.ts, `lazy`).
   */
  client(opts?: { autostart?: boolean; waits?: boolean }): Promise<Client>;
  /** The public client (api/client.ts) over client(opts): the CLI drives sessions only through it. */
  harness(opts?: { autostart?: boolean; waits?: boolean }): Promise<HarnessClient>;
  /** Who is acting (user@host): the client identity Temporal records with answers and approvals. */
  readonly who: string;
  /**
   * The config file the command was given (--config): a background worker this command starts
   * loads its declarations (MCP servers, endpoints, skills folders) from it.
   */
  configFile?: string;
}

/** Builds the context from the environment; nothing is read or checked until a command asks. */
export function createContext(env: NodeJS.ProcessEnv = process.env): CliContext {
  let settings: TemporalSettings | undefined;
  let who: string | undefined;
  let client: Promise<Client> | undefined;
  let home: string | undefined;
  const ctx: CliContext = {
    get settings() {
      return (settings ??= temporalSettings(env));
    },
    get home() {
      if (home === undefined) {
        const opened = openHome(env);
        for (const notice of opened.notices) say(notice);
        home = opened.home;
      }
      return home;
    },
    env,
    get who() {
      return (who ??= `${username(env)}@${os.hostname()}`);
    },
    client(opts = {}) {
      client ??= (async () => {
        const s = ctx.settings;
        // Loaded here, not at start: the Temporal SDK is most of what a command costs to start,
        // and `--help` or a usage error never needs it.
        const [{ ensureEmbedded }, { connectClient }] = await Promise.all([import('../client/embedded'), import('../client/temporal')]);
        if (opts.autostart) await ensureEmbedded(s, ctx.home, say, ctx.configFile ? { HARNESS_CONFIG: ctx.configFile } : {});
        return connectClient(s, 5_000, `harness-cli ${ctx.who}`, { say, ...(opts.waits ? { lazy: true } : {}) });
      })();
      return client;
    },
    async harness(opts = {}) {
      const { HarnessClient } = await import('../api/client');
      return new HarnessClient(await ctx.client(opts), { taskQueue: ctx.settings.taskQueue, env });
    },
  };
  return ctx;
}

/** The login name; a uid without a passwd entry (containers) has none, which is no reason to fail. */
function username(env: NodeJS.ProcessEnv): string {
  try {
    return os.userInfo().username;
  } catch {
    return env.USER || env.LOGNAME || `uid-${process.getuid?.() ?? 'unknown'}`;
  }
}
