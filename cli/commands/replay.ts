/** `harness replay <id> [--json]`: do a session's histories still replay with the current workflow code? */
import type { Command } from 'commander';
import type { CliContext } from '../context';
import { parseSessionOrAnyTurnId } from '../args';

// The action loads its implementation (the workflow code and the SDK's replayer) when it runs.
export function registerReplay(program: Command, ctx: CliContext): void {
  program
    .command('replay')
    .description(
      "Replay every run of a session's workflow and of its turns (or of one turn) against the current workflow code (dist/workflow-bundle.js); " +
        'exit 1 and the first divergence of each run that no longer replays',
    )
    .argument('<id>', 'a session id, or a turn id (<session>/turn-N, or a sub-agent\'s <session>/turn-N/agent-<call id>)', parseSessionOrAnyTurnId)
    .option('--json', 'print {ok, runs: [{workflow_id, run_id, ok, divergence?}]}')
    .action(async (id: string, o: { json?: boolean }) => (await import('../actions/replay')).replay(ctx, id, o));
}
