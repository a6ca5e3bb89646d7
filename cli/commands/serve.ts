/** `harness dev`, `harness worker`, `harness model serve`: long-running processes. */
import type { Command } from 'commander';
import { embeddedFiles, startForegroundDev, stopEmbedded } from '../../lib/embedded';
import { loadScript, ScriptError } from '../../scripted/script';
import { startScriptedModel } from '../../scripted/server';
import { UsageError } from '../../lib/errors';
import { EndpointError, endpointFromEnv, shownUrl } from '../../lib/trace/otlp';
import { followTurns } from '../../lib/trace/otlp-follow';
import { runWorker } from '../../workers/main';
import type { CliContext } from '../context';
import { parsePort } from '../args';
import { print, say } from '../output';

export function registerServe(program: Command, ctx: CliContext): void {
  program
    .command('dev')
    .description('Run the embedded Temporal dev server (SQLite under HARNESS_HOME, Web UI) and a worker in the foreground; with OTEL_EXPORTER_OTLP_ENDPOINT set, each turn is exported over OTLP once it closes')
    .option('--stop', 'stop the server and worker that `harness run` started in the background (or a `harness dev` that was killed)')
    .action(async (o: { stop?: boolean }) => {
      if (o.stop) {
        const { stopped, ignored } = await stopEmbedded(ctx.home, say);
        for (const line of ignored) say(line);
        say(stopped.length ? `stopped ${stopped.join(', ')}` : 'nothing was running');
        return;
      }
      const s = ctx.settings;
      if (!s.embedded) throw new UsageError('TEMPORAL_ADDRESS is set: `harness dev` runs the embedded server only', 'unset it, or run `harness worker` against your cluster');
      const otlp = otlpEndpoint(ctx.env);
      const dev = await startForegroundDev(s, ctx.home, say);
      let follow: { stop(): Promise<void> } | undefined;
      try {
        if (otlp) {
          follow = followTurns({ client: await ctx.client(), url: otlp, home: ctx.home, taskQueue: s.taskQueue, env: ctx.env, log: say });
          say(`exporting each turn to ${shownUrl(otlp)} once it closes`);
        }
        await runWorker({ ...ctx.env, ...(dev.recordedWorker ? { HARNESS_WORKER_PIDFILE: embeddedFiles(ctx.home).workerPid } : {}) }, say);
      } finally {
        await follow?.stop();
        dev.server?.kill('SIGTERM');
        dev.cleanup();
      }
    });

  program
    .command('worker')
    .description('Run a worker against TEMPORAL_ADDRESS (default: the embedded dev server)')
    .action(async () => {
      await runWorker(ctx.env, say);
    });

  const model = program.command('model').description('The scripted model (an OpenAI-compatible test double)');
  model
    .command('serve')
    .description('Serve a script as an OpenAI-compatible chat-completions endpoint until Ctrl-C')
    .requiredOption('--script <file>', 'script file (JSON: {"steps": [...]})')
    .option('--port <port>', 'port to listen on (0 = any free port)', parsePort, 8787)
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .action(async (o: { script: string; port: number; host: string }) => {
      let script;
      try {
        script = loadScript(o.script);
      } catch (err) {
        if (err instanceof ScriptError) throw new UsageError(err.message, 'see README "Scripted model" for the format');
        throw err;
      }
      const server = await startScriptedModel({ script, port: o.port, host: o.host });
      print(server.url);
      say(`scripted model serving ${o.script} (${script.steps.length} steps) at ${server.url}; point OPENAI_BASE_URL there. Ctrl-C stops it.`);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await server.close();
    });
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
