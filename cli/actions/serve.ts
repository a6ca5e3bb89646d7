/** What `harness dev`, `harness worker` and `harness model serve` do (cli/commands/serve.ts defines them and loads this when one runs). */
import { embeddedFiles, startForegroundDev } from '../../client/embedded';
import { stopEmbedded } from '../../client/embedded-stop';
import { loadScript, ScriptError } from '../../scripted-model/script';
import { startScriptedModel } from '../../scripted-model/server';
import { UsageError } from '../../machine/errors';
import { EndpointError, endpointFromEnv, shownUrl } from '../../history/trace/otlp-endpoint';
import { followTurns } from '../../client/otlp-export';
import { runWorker } from '../../workers/main';
import type { CliContext } from '../context';
import { print, say } from '../output';
import { openConsole } from './console';
import path from 'node:path';

export interface DevFlags {
  stop?: boolean;
  console?: boolean;
  ui?: boolean;
  config?: string;
}

/** Flags of `harness worker`. */
export interface WorkerFlags {
  config?: string;
}

/** The worker's environment: a config file given with --config is the one it declares from (as HARNESS_CONFIG would). */
function workerEnv(ctx: CliContext, config: string | undefined): NodeJS.ProcessEnv {
  // The home this command already checked (and said what it ignored about): the worker uses it as is.
  return { ...ctx.env, HARNESS_HOME: ctx.home, ...(config ? { HARNESS_CONFIG: path.resolve(config) } : {}) };
}

export interface ModelServeFlags {
  script: string;
  port: number;
  host: string;
}

export async function startDev(ctx: CliContext, o: DevFlags): Promise<void> {
  if (o.stop) {
    const { stopped, ignored } = await stopEmbedded(ctx.home, say);
    for (const line of ignored) say(line);
    say(stopped.length ? `stopped ${stopped.join(', ')}` : 'nothing was running');
    return;
  }
  const s = ctx.settings;
  if (!s.embedded) throw new UsageError('TEMPORAL_ADDRESS is set: `harness dev` runs the embedded server only', 'unset it, or run `harness worker` against your cluster');
  const otlp = otlpEndpoint(ctx.env);
  const dev = await startForegroundDev(s, ctx.home, say, { ui: o.ui === true });
  let follow: { stop(): Promise<void> } | undefined;
  let page: { close(): Promise<void> } | undefined;
  try {
    // The operator console beside the worker (a taken port gives way to a free one).
    if (o.console !== false) {
      const c = await openConsole(ctx, { host: '127.0.0.1' }, { fallback: true, ...(dev.server ? { temporalUi: o.ui === true } : {}) });
      page = c;
      say(`console: ${c.url}  (the link carries its access token)`);
    }
    say(`sessions: ${o.console !== false ? 'the console above, or ' : '`harness console` in a browser, or '}\`harness sessions\` and \`harness status <session>\``);
    if (otlp) {
      follow = followTurns({ client: await ctx.client(), url: otlp, home: ctx.home, taskQueue: s.taskQueue, env: ctx.env, log: say });
      say(`exporting each turn to ${shownUrl(otlp)} once it closes`);
    }
    await runWorker({ ...workerEnv(ctx, o.config), ...(dev.recordedWorker ? { HARNESS_WORKER_PIDFILE: embeddedFiles(ctx.home).workerPid } : {}) }, say);
  } finally {
    await follow?.stop();
    await page?.close();
    dev.server?.kill('SIGTERM');
    dev.cleanup();
  }
}

export async function worker(ctx: CliContext, o: WorkerFlags = {}): Promise<void> {
  await runWorker(workerEnv(ctx, o.config), say);
}

export async function serveModel(o: ModelServeFlags): Promise<void> {
  let script;
  try {
    script = loadScript(o.script);
  } catch (err) {
    if (err instanceof ScriptError) throw new UsageError(err.message, 'see docs/models.md, "Scripted model", for the format');
    throw err;
  }
  const server = await startScriptedModel({ script, port: o.port, host: o.host, record: false });
  print(server.url);
  say(`scripted model serving ${o.script} (${script.steps.length} steps) at ${server.url}; point OPENAI_BASE_URL there. Ctrl-C stops it.`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
}

/** Where `harness dev` exports turns, checked before anything starts: a bad URL is a usage error. */
function otlpEndpoint(env: NodeJS.ProcessEnv): URL | undefined {
  try {
    return endpointFromEnv(env);
  } catch (err) {
    const name = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
    if (err instanceof EndpointError) throw new UsageError(`${name}: ${err.message}`, 'set it to the base URL of an OTLP/HTTP receiver, e.g. http://127.0.0.1:6006 for Phoenix');
    throw err;
  }
}
