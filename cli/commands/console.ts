/** `harness console [--port P] [--host H] [--queues a,b]`: the operator console in a browser (console/). */
import type { Command } from 'commander';
import type { CliContext } from '../context';
import type { ConsoleFlags } from '../actions/console';
import { parsePort, parseQueues } from '../args';

// The action loads the server (and the Temporal client) when it runs.
export function registerConsole(program: Command, ctx: CliContext): void {
  program
    .command('console')
    .description(
      'Serve the operator console on 127.0.0.1: sessions with their state, a session\'s steps live, an approval inbox across all sessions (approve, approve always, deny, answer), links to the Temporal Web UI; ' +
        'every page and action needs the access token in the link it prints (or HARNESS_CONSOLE_TOKEN)',
    )
    .option('--port <port>', 'port to listen on (default HARNESS_CONSOLE_PORT, else 8390; 0 = any free port)', parsePort)
    .option('--host <host>', 'interface to listen on (anything but loopback lets others on the network try the token)', '127.0.0.1')
    .option('--queues <names>', 'list (and inbox) only the sessions of these task queues, comma-separated (default HARNESS_CONSOLE_QUEUES, else every queue)', parseQueues)
    .action(async (o: ConsoleFlags) => (await import('../actions/console')).serveConsole(ctx, o));
}
