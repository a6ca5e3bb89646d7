/** `harness status`, `harness sessions`, `harness answer`, `harness end`: talk to existing sessions. */
import type { Command } from 'commander';
import { answerQuestion, checkMessage, endSession, sessionState } from '../../lib/session-client';
import type { CliContext } from '../context';
import { pendingLines, printJson, say, usageLine } from '../output';
import { followTurn, waitTimeoutOption } from '../wait';
import { parseLimit, parseSessionId } from '../args';

export function registerInspect(program: Command, ctx: CliContext): void {
  program
    .command('status')
    .description("Show a session's state: status, pending question, turns, token usage")
    .argument('<session>', 'session id', parseSessionId)
    .option('--json', 'print the state as JSON')
    .action(async (sessionId: string, o: { json?: boolean }) => {
      const s = await sessionState(await ctx.client(), sessionId);
      if (o.json) return printJson(s);
      const lines = [
        `session ${s.sessionId}: ${s.status}`,
        `model ${s.model} · ${s.turnCount} turn(s) · ${s.messageCount} message(s) · ${usageLine(s.usage)}`,
      ];
      if (s.currentTurnId) lines.push(`current turn: ${s.currentTurnId}`);
      if (s.pending) lines.push(...pendingLines(s.pending).map((l) => `pending ${l}`));
      const mem = Object.keys(s.memory);
      if (mem.length) lines.push(`working memory: ${mem.join(', ')}`);
      if (s.lastTurn) lines.push(`last turn ${s.lastTurn.turnId}: ${s.lastTurn.terminated_by} in ${s.lastTurn.steps} step(s) — ${oneLine(s.lastTurn.answer)}`);
      process.stdout.write(`${lines.join('\n')}\n`);
    });

  program
    .command('sessions')
    .description('List sessions, newest first')
    .option('--limit <n>', 'at most this many (1 to 1000)', parseLimit, 20)
    .option('--json', 'print as JSON')
    .action(async (o: { limit: number; json?: boolean }) => {
      const client = await ctx.client();
      const rows: { session_id: string; status: string; started: string }[] = [];
      for await (const wf of client.workflow.list({ query: "WorkflowType = 'sessionWorkflow'" })) {
        rows.push({ session_id: wf.workflowId, status: wf.status.name, started: wf.startTime.toISOString() });
        if (rows.length >= o.limit) break;
      }
      if (o.json) return printJson(rows);
      if (!rows.length) return say('no sessions yet; start one with `harness run "<task>"`');
      for (const r of rows) process.stdout.write(`${r.session_id}\t${r.status.toLowerCase()}\t${r.started}\n`);
    });

  program
    .command('answer')
    .description("Answer a session's pending ask_user question (from any process); waits for the turn like `run`")
    .argument('<session>', 'session id', parseSessionId)
    .argument('<text>', 'the answer')
    .option('--json', 'print the turn result as JSON')
    .option('--no-wait', 'return as soon as the answer is delivered')
    .addOption(waitTimeoutOption())
    .action(async (sessionId: string, text: string, o: { json?: boolean; wait: boolean; waitTimeout: number }) => {
      checkMessage(text, 'the answer', 'give the answer as text');
      const client = await ctx.client();
      const turnId = await answerQuestion(client, sessionId, text);
      process.exitCode = await followTurn(client, sessionId, turnId, o, 'answered');
    });

  program
    .command('end')
    .description('End a session once its current turn is done')
    .argument('<session>', 'session id', parseSessionId)
    .action(async (sessionId: string) => {
      await endSession(await ctx.client(), sessionId);
      say(`session ${sessionId} ended`);
    });
}

function oneLine(text: string, max = 120): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
