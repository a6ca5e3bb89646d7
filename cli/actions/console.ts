/** What `harness console` does, and the console `harness dev` starts beside its worker. */
import type { CliContext } from '../context';
import { UsageError } from '../../machine/errors';
import { print, say } from '../output';
import type { ConsoleServer } from '../../console/server';

export interface ConsoleFlags {
  port?: number;
  host: string;
  /** The task queues whose sessions are listed, in place of HARNESS_CONSOLE_QUEUES (parsed by parseQueues). */
  queues?: string[];
}

/** The console's default port, unless HARNESS_CONSOLE_PORT says another. */
const DEFAULT_CONSOLE_PORT = 8390;

/** How `harness dev` opens its console. */
interface ConsoleOptions {
  /** A taken port gives way to a free one. */
  fallback?: boolean;
  /** Whether the embedded server has a Web UI to link to (unknown: whatever listens on its port). */
  temporalUi?: boolean;
}

/** Starts the console for this context. */
export async function openConsole(ctx: CliContext, o: ConsoleFlags, opts: ConsoleOptions = {}): Promise<ConsoleServer> {
  const [{ startConsole }, { newToken }, { connectClient, tcpProbe }, { HarnessClient }] = await Promise.all([
    import('../../console/server'),
    import('../../console/security'),
    import('../../client/temporal'),
    import('../../api/client'),
  ]);
  const s = ctx.settings;
  const envPort = ctx.env.HARNESS_CONSOLE_PORT ? Number(ctx.env.HARNESS_CONSOLE_PORT) : undefined;
  if (envPort !== undefined && !(Number.isInteger(envPort) && envPort >= 0 && envPort <= 65535)) throw new UsageError('HARNESS_CONSOLE_PORT must be a port number', 'unset it or give a number from 0 to 65535');
  const port = o.port ?? envPort ?? DEFAULT_CONSOLE_PORT;
  // Decisions taken in the page are recorded under this identity (who approved: the console's user).
  const client = await connectClient(s, 5_000, `harness-console ${ctx.who}`, { say });
  // The embedded server serves its Web UI only when `harness dev --ui` asked for one.
  const embeddedUi = s.embedded && (opts.temporalUi ?? (await tcpProbe(`127.0.0.1:${s.uiPort}`, 1_000)) === 'open');
  const deps = {
    harness: new HarnessClient(client, { taskQueue: s.taskQueue, env: ctx.env }),
    home: ctx.home,
    env: ctx.env,
    taskQueue: s.taskQueue,
    namespace: s.namespace,
    ...(o.queues ? { queues: o.queues } : {}),
    ...(s.embedded ? (embeddedUi ? { temporalUi: `http://127.0.0.1:${s.uiPort}` } : {}) : ctx.env.HARNESS_TEMPORAL_UI ? { temporalUi: ctx.env.HARNESS_TEMPORAL_UI.replace(/\/+$/, '') } : {}),
  };
  const token = ctx.env.HARNESS_CONSOLE_TOKEN?.trim() || newToken();
  if (token.length < 16) throw new UsageError('HARNESS_CONSOLE_TOKEN is too short', 'use at least 16 characters, or unset it for a random token');
  const start = (p: number) => startConsole(deps, { host: o.host, port: p, token });
  try {
    const server = await start(port).catch((err: NodeJS.ErrnoException) => {
      if (opts.fallback && err.code === 'EADDRINUSE') return start(0);
      if (err.code === 'EADDRINUSE') throw new UsageError(`port ${port} is in use`, 'pick another with --port (0: any free port)');
      throw err;
    });
    const close = server.close;
    return { ...server, close: async () => (await close(), await client.connection.close()) };
  } catch (err) {
    await client.connection.close();
    throw err;
  }
}

export async function serveConsole(ctx: CliContext, o: ConsoleFlags): Promise<void> {
  const server = await openConsole(ctx, o);
  print(server.url);
  say(`console at ${server.base}; open the link above (it carries the access token). Ctrl-C stops it.`);
  if (o.host !== '127.0.0.1' && o.host !== 'localhost' && o.host !== '::1') say('note: listening beyond loopback: anyone who reaches it and learns the token can approve tool calls');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
}
