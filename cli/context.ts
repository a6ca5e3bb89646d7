/** What every command needs: settings, HARNESS_HOME, a client (starting the embedded server if allowed). */
import os from 'node:os';
import type { Client } from '@temporalio/client';
import { ensureEmbedded } from '../lib/embedded';
import { harnessHome } from '../lib/paths';
import { connectClient, temporalSettings, type TemporalSettings } from '../lib/temporal';
import { say } from './output';

/** Per-invocation context. */
export interface CliContext {
  settings: TemporalSettings;
  home: string;
  env: NodeJS.ProcessEnv;
  /** A connected client; `autostart` brings up the embedded server and worker when needed. */
  client(opts?: { autostart?: boolean }): Promise<Client>;
  /** Who is acting (user@host): the client identity Temporal records with answers and approvals. */
  who: string;
}

/** Builds the context from the environment. */
export function createContext(env: NodeJS.ProcessEnv = process.env): CliContext {
  const settings = temporalSettings(env);
  const home = harnessHome(env);
  let client: Promise<Client> | undefined;
  const who = `${os.userInfo().username}@${os.hostname()}`;
  return {
    settings,
    home,
    env,
    who,
    client(opts = {}) {
      client ??= (async () => {
        if (opts.autostart) await ensureEmbedded(settings, home, say);
        return connectClient(settings, 5_000, `harness-cli ${who}`);
      })();
      return client;
    },
  };
}
