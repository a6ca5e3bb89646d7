/**
 * Background sub-agents: a sub-agent an agent lists with `background: true` is started and the
 * parent goes on at once; the call's result says so, with the child's turn id. The child turn
 * outlives the turn that started it (not its session), sends its waits on people straight to
 * the session, and when it ends its result reaches the session as a message: given to the running
 * turn at its next step, or starting a turn when the session is idle. Pure and deterministic: the
 * signals, the texts the model reads, the limit.
 */
import { defineSignal } from './definitions';
import { toolError, toolOk } from './errors';
import type { TurnStatusSignal } from './messages';
import type { BudgetLimit, Spend } from './budget';
import { NANO } from './pricing';
import type { ToolResult, Usage } from './types';
import { agentPathLabel } from './sub-agents';

/** How many background sub-agents a session may have running at once unless limits.maxBackgroundAgents says otherwise. */
export const DEFAULT_MAX_BACKGROUND_AGENTS = 4;

/** What a background child says of itself, in its memo: the session it reports to and its path of agents. */
export interface BackgroundMemo {
  backgroundOf: string;
  agentPath: string[];
}

/** Who sent a message a background child's end made: the child turn, its sub-agent and the call that started it. */
export interface BackgroundFrom {
  /** The child turn. */
  turnId: string;
  /** The sub-agent's name. */
  agent: string;
  /** The agents from the session's down to it. */
  path: string[];
  /** The call that started it, and the turn that made the call. */
  callId: string;
  parentTurnId: string;
}

/** A background child ended: what its call would have returned, and what it spent. */
export interface BackgroundResult extends BackgroundFrom {
  result: ToolResult;
  usage?: Usage;
  spend?: Spend;
}

/** A background child's end, signalled by the child to its session (deduplicated there by turnId). */
export const backgroundResultSignal = defineSignal<[BackgroundResult]>('backgroundResult');
/**
 * A background child's status (it began, a wait began or ended): sent to its session, which shows
 * its waits while the turn that started it is gone. `running` without `pending` when it starts,
 * with `held`: what its budget lets it spend, which the session holds against its own budget
 * until the child's end brings what it really spent.
 */
export const backgroundStatusSignal = defineSignal<[BackgroundStatus]>('backgroundStatus');

/** What a background child's status signal carries. */
export type BackgroundStatus = TurnStatusSignal & { path: string[]; held?: Spend };

/** What a budget of one turn lets it spend at most, as spend (a unit it does not bound: none of it); undefined without one. */
export function heldBy(limit: BudgetLimit | undefined): Spend | undefined {
  if (!limit || (limit.tokens === undefined && limit.usd === undefined)) return undefined;
  return { tokens: limit.tokens ?? 0, nanoUsd: Math.round((limit.usd ?? 0) * NANO) };
}

/** What the call returns when it starts a background child. */
export function backgroundStarted(name: string, turnId: string): ToolResult {
  return toolOk({
    agent: name,
    background: true,
    turnId,
    note: `${name} started in the background (turn ${turnId}); its result will come as a message when it ends. Go on meanwhile.`,
  });
}

/** Why a background child may not start (too many running in the session), as the result the model reads. */
export function backgroundBound(o: { name: string; running: number; max: number }): ToolResult | undefined {
  if (o.running < o.max) return undefined;
  return toolError('SUB_AGENT_LIMIT', `${o.name} was not started: a session may have ${o.max} background sub-agents running at once (limits.maxBackgroundAgents), and this one has.`, {
    recoverable: true,
    suggestion: 'wait for a running one to report, or do the task yourself',
  });
}

/** The message a background child's end becomes: which sub-agent, which call, and its result. */
export function backgroundMessage(r: BackgroundResult): string {
  const head = `[background sub-agent ${agentPathLabel(r.path)} (turn ${r.turnId}), answering call ${r.callId} of ${r.parentTurnId}]`;
  const res = r.result as { ok: boolean; result?: { answer?: unknown; output?: unknown }; message?: string };
  if (res.ok && res.result?.output !== undefined) return `${head} finished with this output:\n${JSON.stringify(res.result.output)}`;
  if (res.ok) return `${head} answered:\n${String(res.result?.answer ?? '')}`;
  return `${head} failed: ${res.message ?? 'no answer'}`;
}

/** Who sent such a message, as the trace shows it (`sent_by`). */
export function backgroundSender(f: Pick<BackgroundFrom, 'path' | 'turnId'>): string {
  return `background sub-agent ${agentPathLabel(f.path)} (${f.turnId})`;
}

const countable = (n: unknown, optional: boolean): boolean => (n === undefined ? optional : typeof n === 'number' && Number.isFinite(n) && n >= 0);

/**
 * The figures of a background child's status or end that the session may count: a spend, usage
 * or hold whose every figure is a finite non-negative number, or undefined. A signal reaches the
 * session from whoever can reach Temporal: a forged negative figure must never lower what the
 * session counts as spent (a forged large one only stops it sooner).
 */
export function countableFigures(f: { usage?: Usage; spend?: Spend; held?: Spend }): { usage?: Usage; spend?: Spend; held?: Spend } {
  const spendOk = (s: Spend | undefined) => s !== undefined && typeof s === 'object' && countable(s.tokens, false) && countable(s.nanoUsd, true);
  const u = f.usage;
  const usageOk = u !== undefined && typeof u === 'object' && countable(u.prompt_tokens, false) && countable(u.completion_tokens, false) && countable(u.total_tokens, false) && countable(u.cached_tokens, true);
  return { ...(usageOk ? { usage: u } : {}), ...(spendOk(f.spend) ? { spend: f.spend } : {}), ...(spendOk(f.held) ? { held: f.held } : {}) };
}
