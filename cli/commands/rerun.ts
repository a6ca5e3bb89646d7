/** `harness rerun <turn-id>`: recorded replies, fresh tools; the first step where the run goes another way. */
import type { Command } from 'commander';
import type { CliContext } from '../context';
import type { RerunFlags } from '../actions/rerun';
import { waitTimeoutOption } from '../wait-options';
import { parseAnyTurnId, parseSessionId } from '../args';

// The action loads its implementation (cli/actions/rerun.ts, and the Temporal client) when it runs.
export function registerRerun(program: Command, ctx: CliContext): void {
  program
    .command('rerun')
    .description(
      'Reproduce a recorded turn offline: the model\'s replies come from the record (no model is asked), the tools of the sandbox run again in a fresh workspace, ' +
        'their recorded approvals apply to the same calls; calls that leave the sandbox (http_request, MCP and custom tools, remember_longterm) are answered with their recorded results, never made. ' +
        'Reports the first step where the new run differs (a different tool result, a different call). Exit 1 when it diverged',
    )
    .argument('<turn-id>', 'the recorded turn: <session>/turn-N, or a sub-agent\'s (<session>/turn-N/agent-<call id>), which the new session runs as that sub-agent', parseAnyTurnId)
    .option('--workspace <dir>', 'seed the fresh workspace with this folder\'s files (default: the workspace as it was when the turn began)')
    .option('--live-effects', 'make the calls that leave the sandbox again, each judged by the session\'s policy afresh (asked under the default policy; no recorded approval applies)')
    .option('--live-after', 'after a divergence, go on with the recorded model from the step after it, in another new session')
    .option('--model <model>', 'with --live-after: go on with this model instead (a scripted:<file> starts at its first step)')
    .option('--session <id>', 'the rerun session\'s id (default: a new one)', parseSessionId)
    .option('--json', 'print {session_id, turn_id, terminated_by, effects: "record" | "live", rerun: {compared, diverged, first?}}')
    .addOption(waitTimeoutOption())
    .addHelpText('after', '\nExample: harness rerun my-session/turn-2 --workspace ./fixtures')
    .action(async (turnId: string, o: RerunFlags) => (await import('../actions/rerun')).rerun(ctx, turnId, o));
}
