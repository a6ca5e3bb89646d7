/**
 * A custom tool that runs a command on a named host with an environment: the shape of call
 * (`{command, host, env}`) whose views once showed the command alone. It runs nothing; it
 * records what it was given, so a test can compare what ran with what a person was shown.
 */
import { z } from 'zod';
import { defineTool } from '../../api/define-tool';

/** The arguments of the call the views must show whole: the host and the environment as much as the command. */
export const OPS_ARGS = { command: 'uptime', host: 'prod-db-1', env: { LD_PRELOAD: '/tmp/evil.so' } };

/** `ops_exec`, which pushes each call's arguments onto `received`. */
export function opsExecTool(received: unknown[]) {
  return defineTool({
    name: 'ops_exec',
    description: 'Run a command on a host of the fleet, with extra environment variables.',
    schema: z.object({ command: z.string().min(1), host: z.string().min(1), env: z.record(z.string(), z.string()).optional() }),
    risk: 'dangerous',
    timeoutSec: 20,
    run: async (args) => {
      received.push(args);
      return { exit_code: 0, stdout: `ran on ${args.host}` };
    },
  });
}
