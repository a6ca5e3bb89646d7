/**
 * What `harness status`, `sessions [prune]`, `answer` and `end` do (cli/commands/inspect.ts
 * defines the commands and loads this when one runs).
 */
import { checkMessage } from '../../client/session-client';
import type { SessionView } from '../../client/session-status';
import { endAndPurge, findPrunable, parseAge, purgeSessions, type Prunable } from '../../client/retention';
import { type PurgeReport } from '../../workflows/session/purge';
import { UserError } from '../../machine/errors';
import { queuedMessages } from '../../client/queued-messages';
import type { CliContext } from '../context';
import { pendingLines, print, printJson, printJsonLines, say, usageLine } from '../output';
import { followTurn, commandTroubleWait } from '../wait';
import { WaitNotes } from '../wait-notes';
import { escapeForTerminal } from '../../machine/terminal/escape';
import { describeToolMode } from '../../deterministic/tool-mode';
import { costLine, ledgerSummaryJson, sessionCost } from './cost';
import { follow, sessionsList } from './watch';
import { turnProgress, type TurnProgress } from '../../client/watch/progress';
import { snakeKeys } from '../json-casing';
import type { Usage } from '../../deterministic/types';
import { recordShown } from '../shown-calls';
import { backgroundLine } from '../../client/background-status';

export interface StatusFlags {
  json?: boolean;
  waitTimeout: number;
  /** Then print each step event as it happens until the session closes or Ctrl-C. */
  follow?: boolean;
}

export interface SessionsFlags {
  limit: number;
  waitTimeout: number;
  json?: boolean;
  /** Only sessions in this state (`waiting` for any wait for a person, `closed` for any end). */
  state?: string;
}

export interface PruneFlags {
  olderThan: string;
  dryRun?: boolean;
  json?: boolean;
}

export interface AnswerFlags {
  json?: boolean;
  wait: boolean;
  waitTimeout: number;
}

export interface EndFlags {
  purge?: boolean;
}

export async function status(ctx: CliContext, sessionId: string, o: StatusFlags): Promise<void> {
  const timeoutMs = o.waitTimeout * 1000;
  const harness = await ctx.harness({ waits: true });
  const troubleWait = commandTroubleWait(ctx, new WaitNotes(), timeoutMs, `for session ${sessionId}`, 'nothing was changed', `try again with \`harness status ${sessionId}\``);
  const s = await harness.status(sessionId, { troubleWait });
  // What it cost, from history by the ledger (a closed session needs no worker for it).
  const cost = await sessionCost(harness.temporal, sessionId);
  // A running turn: its step, current call and tokens so far, from its history.
  const progress = s.currentTurnId ? await turnProgress(harness.temporal, s.currentTurnId).catch(() => undefined) : undefined;
  // Messages sent while the turn runs (`harness send`) that its model has not read yet.
  const queued = s.currentTurnId && s.status !== 'idle' ? await queuedMessages(harness.temporal, s.currentTurnId) : undefined;
  // The pending calls it shows (in lines or JSON) are what `approve <session>` may later decide without ids.
  if (s.pending?.kind === 'approvals') recordShown(ctx.home, sessionId, s.pending.calls);
  const json = snakeKeys({ ...s, ...(cost.ledger ? { cost: ledgerSummaryJson(cost.ledger) } : {}), ...(progress ? { progress } : {}), ...(queued !== undefined ? { queued } : {}) });
  // Following: the state is the first JSON line, each event one more.
  if (o.json && o.follow) printJsonLines([json]);
  else if (o.json) printJson(json);
  if (!o.json) print([...statusLines(s, progress), ...(progress ? [progressLine(progress)] : []), ...(queued ? [`${queued} message(s) queued for the running turn: its model reads them at its next step`] : []), ...(cost.ledger ? [costLine(cost.ledger, sessionId)] : cost.problem ? [`(cost: ${escapeForTerminal(cost.problem)})`] : [])].join('\n'));
  if (o.follow) await follow(harness.temporal, sessionId, { json: Boolean(o.json), fromNow: true, home: ctx.home });
}

/** `  step 3 · tool run_shell make (4.2 s) · 2 model call(s), 1 tool call(s), 1234 tokens so far`. */
function progressLine(p: TurnProgress): string {
  const since = p.current_since ? ` (${Math.max(0, Math.round((Date.now() - Date.parse(p.current_since)) / 100) / 10)} s)` : '';
  const now = p.current ? ` · ${escapeForTerminal(p.current)}${since}` : '';
  return `  step ${p.step}${now} · ${p.model_calls} model call(s), ${p.tool_calls} tool call(s), ${p.usage.total_tokens} tokens so far`;
}

export async function sessions(ctx: CliContext, o: SessionsFlags): Promise<void> {
  await sessionsList(ctx, o);
}

export async function prune(ctx: CliContext, o: PruneFlags): Promise<void> {
  // Checked before connecting: a usage error needs no server.
  const before = new Date(Date.now() - parseAge(o.olderThan));
  const client = await ctx.client();
  const taskQueue = ctx.settings.taskQueue;
  const found = await findPrunable(client, { taskQueue, before });
  const outcome = o.dryRun ? undefined : await purgeSessions(client, taskQueue, found.map((p) => p.sessionId));
  const failedOf = new Map(outcome?.failed.map((f) => [f.sessionId, f.error]));
  const reportOf = new Map(outcome?.purged.map((r) => [r.sessionId, r]));
  if (o.json) {
    printJson({
      dry_run: Boolean(o.dryRun),
      older_than: o.olderThan,
      before: before.toISOString(),
      sessions: found.map((p) => ({
        session_id: p.sessionId,
        status: p.status.toLowerCase(),
        closed_at: p.closedAt?.toISOString() ?? null,
        ...(reportOf.has(p.sessionId) ? { purged: reportJson(reportOf.get(p.sessionId)!) } : {}),
        ...(failedOf.has(p.sessionId) ? { error: failedOf.get(p.sessionId) } : {}),
      })),
      purged: outcome?.purged.length ?? 0,
      failed: outcome?.failed.length ?? 0,
    });
  } else if (found.length === 0) {
    say(`nothing to prune: no session of task queue ${taskQueue} ended before ${before.toISOString()}`);
  } else if (!outcome) {
    for (const p of found) print(`would purge ${p.sessionId} (${endedLine(p)})`);
    print(`${found.length} session(s) would be purged (dry run: nothing was deleted)`);
  } else {
    for (const p of found) {
      const report = reportOf.get(p.sessionId);
      print(report ? purgeLines(report).join('\n') : `failed ${p.sessionId}: ${failedOf.get(p.sessionId) ?? 'no report'}`);
    }
    print(`purged ${outcome.purged.length} of ${found.length} session(s)`);
  }
  if (outcome?.failed.length) process.exitCode = 1;
}

export async function answer(ctx: CliContext, sessionId: string, text: string, o: AnswerFlags): Promise<void> {
  checkMessage(text, 'the answer', 'give the answer as text');
  // Delivering the answer and waiting for the turn ride out trouble alike, each bounded by --wait-timeout.
  const timeoutMs = o.waitTimeout * 1000;
  const harness = await ctx.harness({ waits: true });
  const notes = new WaitNotes();
  const troubleWait = commandTroubleWait(ctx, notes, timeoutMs, `for session ${sessionId}`, '', `see whether it arrived with \`harness status ${sessionId}\``);
  const { turnId } = await harness.answer(sessionId, text, { troubleWait });
  process.exitCode = await followTurn(harness, sessionId, turnId, o, 'answered', { notes, ctx });
}

export async function end(ctx: CliContext, sessionId: string, o: EndFlags): Promise<void> {
  const harness = await ctx.harness();
  const client = harness.temporal;
  if (!o.purge) {
    await harness.end(sessionId);
    return say(`session ${sessionId} ended`);
  }
  const r = await endAndPurge(client, sessionId);
  const retry = `try again with \`harness end ${sessionId} --purge\``;
  if (r.kind === 'after-turn') return say(`session ${sessionId} ends once its current turn is done, and then deletes what it stored`);
  if (r.kind === 'pending') return say(`session ${sessionId} ended; the worker is still deleting what it stored`);
  if (r.kind === 'ended') {
    say(`session ${sessionId} ended`);
    if (!r.purged) throw new UserError(`session ${sessionId} ended, but what it stored was not deleted: ${r.purgeFailed ?? 'no report'}`, retry);
    return purgeLines(r.purged).forEach((l) => say(l));
  }
  say(`session ${sessionId} had already ended`);
  const failed = r.outcome.failed[0];
  if (failed) throw new UserError(`what session ${sessionId} stored was not deleted: ${failed.error}`, retry);
  for (const report of r.outcome.purged) purgeLines(report).forEach((l) => say(l));
}

/** A purge report for a person: one line, then one per problem. */
function purgeLines(r: PurgeReport): string[] {
  const removed = r.removed.length ? `removed ${r.removed.join(', ')}` : 'no files to remove';
  const sandbox = r.sandboxRemoved ? '' : '; sandbox not checked (Docker did not answer; the next worker start removes it)';
  return [`purged ${r.sessionId}: ${r.storeRows} message-store row(s); ${removed}${sandbox}`, ...r.problems.map((p) => `  problem: ${p}`)];
}

/** A purge report in `--json` shape. */
function reportJson(r: PurgeReport) {
  return { store_rows: r.storeRows, removed: r.removed, sandbox_removed: r.sandboxRemoved, problems: r.problems };
}

/** How a prunable session ended, for a person. */
function endedLine(p: Prunable): string {
  return p.closedAt ? `${p.status.toLowerCase()} ${p.closedAt.toISOString()}` : 'no longer known to Temporal; last stored data is older';
}

/** A session's view for a person: status (and why it closed), then what is known of its turns. */
/** The lines of `harness status`; a running turn's steps and tokens count with the session's. */
export function statusLines(s: SessionView, running?: TurnProgress): string[] {
  // The reason may quote a model endpoint or a tool; it stays on its line.
  const lines = [`session ${s.sessionId}: ${s.status}${s.reason ? ` — ${escapeForTerminal(s.reason)}` : ''}`];
  if (s.closedAt) lines.push(`closed ${s.closedAt}`);
  const facts = [
    ...(s.model !== undefined ? [`model ${s.model}`] : []),
    ...(s.turnCount !== undefined ? [`${s.turnCount} turn(s)${running ? ' done, 1 running' : ''}`] : []),
    ...(s.messageCount !== undefined ? [`${s.messageCount} message(s)`] : []),
    // The session adds a turn's tokens when it ends: until then they are the running turn's.
    ...(s.usage || running ? [`${usageLine(addUsage(s.usage, running?.usage))}${running ? ', the running turn\'s included' : ''}`] : []),
  ];
  if (facts.length) lines.push(facts.join(' · '));
  // Native tool calls or the text protocol, and why (auto's probe or the config).
  if (s.toolMode) lines.push(`tool calls: ${escapeForTerminal(describeToolMode(s.toolMode))}`);
  // Where its sandbox lives, when workers run as sandbox hosts (HARNESS_HOST_ID).
  if (s.host) lines.push(`sandbox host: ${escapeForTerminal(s.host)}`);
  if (s.detailsMissing) lines.push(`(${escapeForTerminal(s.detailsMissing)})`);
  if (s.currentTurnId) lines.push(`current turn: ${s.currentTurnId}`);
  // The reason is the model's text: it stays on its line.
  if (s.sleeping) lines.push(`sleeping until ${s.sleeping.until} (${escapeForTerminal(s.sleeping.reason)}); wake it with \`harness wake ${s.sessionId}\``);
  if (s.pending) lines.push(...pendingLines(s.pending, s.sessionId, 'pending '));
  const children = backgroundLine(s.background);
  if (children) lines.push(escapeForTerminal(children));
  const mem = Object.keys(s.memory ?? {});
  // Keys the model chose and server names stay on their line (the writer escapes the rest).
  if (mem.length) lines.push(`working memory: ${escapeForTerminal(mem.join(', '))}`);
  for (const m of s.mcp ?? []) lines.push(`mcp ${escapeForTerminal(m.server)}: ${m.status === 'connected' ? `connected, ${m.tools} tool(s)` : `failed: ${escapeForTerminal(m.error ?? '')}`}`);
  if (s.lastTurn) lines.push(`last turn ${s.lastTurn.turnId}: ${s.lastTurn.terminated_by} in ${s.lastTurn.steps} step(s) — ${oneLine(s.lastTurn.answer)}`);
  return lines;
}

function addUsage(a: Usage | undefined, b: Usage | undefined): Usage {
  const zero: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  const x = a ?? zero;
  const y = b ?? zero;
  return { prompt_tokens: x.prompt_tokens + y.prompt_tokens, completion_tokens: x.completion_tokens + y.completion_tokens, total_tokens: x.total_tokens + y.total_tokens };
}

function oneLine(text: string, max = 120): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
