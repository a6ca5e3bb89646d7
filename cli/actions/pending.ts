/** What `harness pending` does (cli/commands/pending.ts defines the command and loads this when it runs). */
import type { CliContext } from '../context';
import type { PendingItem } from '../../client/pending';
import { readUntil } from '../../client/trouble-wait';
import { snakeKeys } from '../json-casing';
import { print, printJson, say } from '../output';
import { commandTroubleWait } from '../wait';
import { WaitNotes } from '../wait-notes';
import { age } from './watch';

/** Lists what waits on a person; a Temporal that is down or restarting is waited out like `harness sessions` does. */
export async function pending(ctx: CliContext, o: { taskQueue?: string; json?: boolean; waitTimeout: number }): Promise<void> {
  const harness = await ctx.harness({ waits: true });
  const troubleWait = commandTroubleWait(ctx, new WaitNotes(), o.waitTimeout * 1000, 'for the pending list', '', 'try again with `harness pending`');
  const items = await readUntil(harness.temporal, () => harness.pending(o.taskQueue ? { taskQueue: o.taskQueue } : {}), troubleWait);
  if (o.json) return printJson(snakeKeys(items));
  if (!items.length) return say(`nothing waits for approval, an answer or a budget${o.taskQueue ? ` on task queue ${o.taskQueue}` : ''}`);
  const now = Date.now();
  for (const item of items) print(pendingLine(item, now));
  const budgets = items.some((i) => i.kind === 'budget') ? ', a budget: `harness approve <session> --budget +N` or `harness deny <session>`' : '';
  say(`decide: \`harness approve <session> <call id>\`, \`harness deny <session> <call id> --reason <why>\`, \`harness answer <session> <text>\`${budgets}`);
}

/** One wait for a person: session, what (approval and call id, question, or budget), the tool and arguments, the question or the budget reached, task queue, how long. */
export function pendingLine(item: PendingItem, now = Date.now()): string {
  const what =
    item.kind === 'approval'
      ? `approval ${item.callId}\t${item.tool} ${oneLine(JSON.stringify(item.args) ?? '', 80)}`
      : item.kind === 'question'
        ? `question ${item.questionId}\t${oneLine(item.question, 80)}`
        : `budget ${item.scope}\t${item.summary}`;
  const of = item.agentPath ? `\tsub-agent ${item.agentPath.join(' › ')}` : '';
  return `${item.sessionId}\t${what}${of}\ttask queue ${item.taskQueue}\tasked ${age(now - Date.parse(item.since))}`;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
