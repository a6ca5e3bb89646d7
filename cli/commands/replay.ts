/** `harness replay <id> [--json]`: do a session's histories still replay with the current workflow code? */
import type { Command } from 'commander';
import { UserError } from '../../lib/errors';
import { quietReplayRuntime } from '../../lib/replay';
import { REPLAY_HINT, replayWorkflows, reportLines } from '../../lib/replay-report';
import { workflowBundlePath } from '../../workers/worker';
import type { CliContext } from '../context';
import { print, printJson } from '../output';
import { parseSessionOrTurnId } from '../args';

export function registerReplay(program: Command, ctx: CliContext): void {
  program
    .command('replay')
    .description(
      "Replay every run of a session's workflow and of its turns (or of one turn) against the current workflow code (dist/workflow-bundle.js); " +
        'exit 1 and the first divergence of each run that no longer replays',
    )
    .argument('<id>', 'a session id, or a turn id (<session>/turn-N)', parseSessionOrTurnId)
    .option('--json', 'print {ok, runs: [{workflow_id, run_id, ok, divergence?}]}')
    .action(async (id: string, o: { json?: boolean }) => {
      const client = await ctx.client();
      quietReplayRuntime();
      const report = await replayWorkflows(client, id, workflowBundlePath());
      if (o.json) printJson(report);
      else print(reportLines(report).join('\n'));
      const bad = report.runs.filter((r) => !r.ok);
      if (!bad.length) return;
      const hint = bad.some((r) => r.divergence) ? REPLAY_HINT : 'the replay itself failed (see above); is the workflow bundle built (`npm run build`)?';
      throw new UserError(`${bad.length} of ${report.runs.length} run(s) of ${id} do not replay with the current workflow code`, hint);
    });
}
