/** What `harness replay` does (cli/commands/replay.ts defines the command and loads this when it runs). */
import { UserError } from '../../machine/errors';
import { quietReplayRuntime } from '../../history/replay/replay';
import { REPLAY_HINT, replayWorkflows, reportLines } from '../../history/replay/report';
import { workflowBundlePath } from '../../machine/paths';
import type { CliContext } from '../context';
import { print, printJson } from '../output';

export async function replay(ctx: CliContext, id: string, o: { json?: boolean }): Promise<void> {
  const client = await ctx.client();
  quietReplayRuntime();
  const report = await replayWorkflows(client, id, workflowBundlePath());
  if (o.json) printJson(report);
  else print(reportLines(report).join('\n'));
  const bad = report.runs.filter((r) => !r.ok);
  if (!bad.length) return;
  const hint = bad.some((r) => r.divergence) ? REPLAY_HINT : 'the replay itself failed (see above); is the workflow bundle built (`npm run build`)?';
  throw new UserError(`${bad.length} of ${report.runs.length} run(s) of ${id} do not replay with the current workflow code`, hint);
}
