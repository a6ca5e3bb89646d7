/** `harness dev`, `harness worker`, `harness model serve`: long-running processes. */
import type { Command } from 'commander';
import type { CliContext } from '../context';
import type { DevFlags, ModelServeFlags, WorkerFlags } from '../actions/serve';
import { parsePort } from '../args';

// The actions load their implementation (the server, the worker, the scripted model) when they run.
export function registerServe(program: Command, ctx: CliContext): void {
  program
    .command('dev')
    .description('Run the embedded Temporal dev server (SQLite under HARNESS_HOME; no HTTP API, no Web UI unless --ui), a worker and the operator console (printing its link) in the foreground; with OTEL_EXPORTER_OTLP_ENDPOINT set, each turn is exported over OTLP once it closes')
    .option('--stop', 'stop the server and worker that `harness run` started in the background (or a `harness dev` that was killed)')
    .option('--no-console', 'do not serve the operator console (`harness console`) beside the worker')
    .option('--config <file>', "the config file whose MCP servers, model endpoint (baseUrl), skills folders and private hosts the worker declares (default HARNESS_CONFIG, else ./harness.config.json once trusted); sessions only name what it declares")
    .option('--ui', "also serve Temporal's Web UI on HARNESS_UI_PORT (default the server's port + 1000); it answers any Host header, so while it runs a web page whose name resolves to 127.0.0.1 can read and start sessions")
    .action(async (o: DevFlags) => (await import('../actions/serve')).startDev(ctx, o));

  program
    .command('worker')
    .description('Run a worker against TEMPORAL_ADDRESS (default: the embedded dev server); it runs only the MCP servers, model endpoints, skills folders and private hosts it declares')
    .option('--config <file>', 'the config file whose MCP servers, model endpoint (baseUrl), skills folders and private hosts it declares (default HARNESS_CONFIG, else ./harness.config.json once trusted)')
    .action(async (o: WorkerFlags) => (await import('../actions/serve')).worker(ctx, o));

  const model = program.command('model').description('The scripted model (an OpenAI-compatible test double)');
  model
    .command('serve')
    .description('Serve a script as an OpenAI-compatible chat-completions endpoint until Ctrl-C')
    .requiredOption('--script <file>', 'script file (JSON: {"steps": [...]})')
    .option('--port <port>', 'port to listen on (0 = any free port)', parsePort, 8787)
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .action(async (o: ModelServeFlags) => (await import('../actions/serve')).serveModel(o));
}
