/**
 * The session's state as a plain class, so the workflow stays a short script of awaits: what it
 * carries from turn to turn and across continue-as-new (conversation, working memory, usage and
 * spend, rules, tools, host), turn numbering, and the status the `state` query shows.
 */
import type { WorkflowInfo } from '@temporalio/workflow';
import { type SessionCarry, type SessionInput, type TurnInput, type TurnResult } from '../../deterministic/session';
import { addUsage, subtractUsage, NO_USAGE } from '../../deterministic/usage';
import { type ForkPrepared, type ForkSpec } from '../../deterministic/fork';
import { type SessionState } from '../../deterministic/session-state';
import { rootCauseMessage } from '../../deterministic/errors';
import type { SendMessageInput, TurnStatusSignal } from '../../deterministic/messages';
import { addSpend, NO_SPEND, subtractSpend, type Spend } from '../../deterministic/budget';
import type { Usage } from '../../deterministic/types';
import { sumLimits } from '../turn/budget';

/** Tracks the session's turns: what each started and finished turn changes, and what the session shows and carries. */
export class SessionTracker {
  private carryState: SessionCarry;
  private status: SessionState['status'] = 'idle';
  private pending: SessionState['pending'];
  /** The current turn sleeps in a `wait` call (its turnStatus signal says so; status stays `running`). */
  private sleeping: SessionState['sleeping'];
  private lastTurn: SessionState['lastTurn'];
  private forkView: SessionState['fork'];
  private rerunView: SessionState['rerun'];
  /** Messages of a fork's conversation before its first step (where a rerun's comparison starts). */
  forkPoint = 0;
  currentTurnId: string | undefined;
  startedTurns: number;

  constructor(private input: SessionInput) {
    // What `status` showed before continue-as-new is shown on (runs from before it carried none).
    const { view, ...carry } = input.carry ?? { messages: [], memory: {}, turnCount: 0, modelCalls: 0, usage: NO_USAGE };
    this.carryState = carry;
    this.lastTurn = view?.lastTurn;
    this.forkView = view?.fork;
    this.rerunView = view?.rerun;
    this.startedTurns = this.carryState.turnCount;
  }

  /** The session's configuration from now on (a long value moved to the message store). */
  useConfig(config: SessionInput['config']): void {
    this.input = { ...this.input, config };
  }

  /** The session's configuration. */
  get config(): SessionInput['config'] {
    return this.input.config;
  }

  /** The MCP tools the session offers (undefined before discovery, or without servers). */
  get mcpTools(): SessionCarry['mcpTools'] {
    return this.carryState.mcpTools;
  }

  useMcpTools(tools: NonNullable<SessionCarry['mcpTools']>): void {
    this.carryState = { ...this.carryState, mcpTools: tools };
  }

  get turnCount(): number {
    return this.carryState.turnCount;
  }

  get busy(): boolean {
    return this.currentTurnId !== undefined;
  }

  /** Deterministic child id: the same session and turn number always name the same workflow. */
  turnId(turn: number): string {
    return `${this.input.sessionId}/turn-${turn}`;
  }

  turnInput(turn: number, msg: SendMessageInput): TurnInput {
    const c = this.carryState;
    return {
      sessionId: this.input.sessionId,
      turn,
      turnId: this.turnId(turn),
      config: this.input.config,
      history: c.messages,
      ...(c.conversation ? { conversation: c.conversation } : {}),
      memory: c.memory,
      userMessage: msg.text,
      ...(msg.maxSteps ? { maxSteps: msg.maxSteps } : {}),
      modelCallBase: c.modelCalls,
      // The session budget is counted across turns: the turn starts from what earlier ones spent.
      ...(this.input.config.limits.budget?.session ? { sessionBudget: { spent: c.spend ?? NO_SPEND, ...(c.budgetRaised ? { raised: c.budgetRaised } : {}) } } : {}),
      ...(c.sessionRules?.length ? { sessionRules: c.sessionRules } : {}),
      ...(c.mcpTools ? { mcpTools: c.mcpTools } : {}),
      ...(c.customTools ? { customTools: c.customTools } : {}),
      ...(c.toolMode ? { toolMode: c.toolMode } : {}),
      ...(c.host ? { host: c.host } : {}),
    };
  }

  started(turn: number, workflowId: string): void {
    this.startedTurns = turn;
    this.currentTurnId = workflowId;
    this.status = 'running';
  }

  finished(r: TurnResult, before: SessionCarry = this.carryState): void {
    const c = before;
    this.carryState = {
      // A turn with the message store returns its conversation by reference; the messages of a
      // session from before the store were handed to that turn, so none are kept here.
      messages: r.conversation ? [] : r.replacesHistory ? (r.messages ?? []) : [...c.messages, ...(r.messages ?? [])],
      ...(r.conversation ? { conversation: r.conversation } : c.conversation ? { conversation: c.conversation } : {}),
      memory: r.memory,
      turnCount: r.turn,
      modelCalls: c.modelCalls + r.modelCalls,
      usage: addUsage(c.usage, r.usage),
      ...(r.sessionRules?.length || c.sessionRules?.length ? { sessionRules: r.sessionRules ?? c.sessionRules ?? [] } : {}),
      // A turn that re-listed a server's tools hands the new list on to later turns.
      ...(r.mcpTools ?? c.mcpTools ? { mcpTools: r.mcpTools ?? c.mcpTools } : {}),
      // The first turn's list of custom tools is the session's for good (later turns do not list).
      ...(c.customTools ?? r.customTools ? { customTools: c.customTools ?? r.customTools } : {}),
      // How the tools are offered, as the first turn decided (auto): later turns keep it.
      ...(c.toolMode ?? r.toolMode ? { toolMode: c.toolMode ?? r.toolMode } : {}),
      ...(c.spend || r.spend ? { spend: addSpend(c.spend ?? NO_SPEND, r.spend ?? NO_SPEND) } : {}),
      ...(c.budgetRaised || r.sessionBudgetRaised ? { budgetRaised: sumLimits(c.budgetRaised, r.sessionBudgetRaised) } : {}),
      // Where the session's sandbox lives now (a turn may have moved it off a lost host).
      ...(r.host ?? c.host ? { host: r.host ?? c.host } : {}),
      lastTurn: { turn: r.turn, terminated_by: r.terminated_by, modelCalls: r.modelCalls, usage: r.usage, ...(r.spend ? { spend: r.spend } : {}) },
    };
    this.lastTurn = { turnId: r.turnId, terminated_by: r.terminated_by, answer: r.answer, steps: r.steps };
    this.currentTurnId = undefined;
    this.pending = undefined;
    this.sleeping = undefined;
    this.status = 'idle';
  }

  /** What a background sub-agent spent, added when its end reaches the session (its parent turn's result did not hold it). */
  addSpent(usage: Usage | undefined, spend: Spend | undefined): void {
    const c = this.carryState;
    this.carryState = { ...c, usage: addUsage(c.usage, usage ?? NO_USAGE), ...(c.spend || spend ? { spend: addSpend(c.spend ?? NO_SPEND, spend ?? NO_SPEND) } : {}) };
  }

  /**
   * A result standing in for a turn whose workflow failed or was cancelled, with what it spent
   * (read from its history) when that could be read.
   */
  failedTurn(turn: number, msg: SendMessageInput, err: unknown, cancelled = false, spent?: { usage: Usage; spend: Spend }): TurnResult {
    const why = cancelled ? 'cancelled' : rootCauseMessage(err);
    return {
      sessionId: this.input.sessionId,
      turnId: this.turnId(turn),
      turn,
      answer: cancelled ? 'The turn was cancelled.' : `The turn failed: ${why}`,
      terminated_by: cancelled ? 'cancelled' : 'failed',
      steps: 0,
      usage: spent?.usage ?? NO_USAGE,
      ...(spent ? { spend: spent.spend } : {}),
      messages: [{ role: 'user', content: msg.text }],
      memory: this.carryState.memory,
      modelCalls: 0,
      toolCalls: [],
      error: why,
    };
  }

  /**
   * Why the last turn cannot be retried, or undefined when it can: it must be the session's last
   * turn and have failed (or been terminated); the session must be idle.
   */
  whyNoRetry(turn: number): string | undefined {
    const last = this.carryState.lastTurn;
    if (!Number.isInteger(turn) || turn < 1 || turn > this.turnCount) return `the session has no turn ${turn}`;
    if (turn !== this.turnCount) return `turn ${turn} is not the session's last turn (the session is at turn ${this.turnCount}); fork it instead`;
    if (this.input.config.inlineHistory) return 'sessions that keep their conversation inline (recorded before the message store) cannot be retried';
    if (!last || last.turn !== turn) return `the session does not know how turn ${turn} ended (it was recorded by an older version)`;
    if (last.terminated_by !== 'failed') return `turn ${turn} ended with ${last.terminated_by}, not a failure; fork it to try another way`;
    return undefined;
  }

  /** `harness retry`: the last turn runs again (its reset run), so the session is busy with it. */
  retrying(turn: number): void {
    this.currentTurnId = this.turnId(turn);
    this.status = 'running';
  }

  /**
   * The reset run's result replaces the failed one: its totals count the whole turn (the steps
   * kept from before the reset too), so the failed run's are taken out first.
   */
  retried(r: TurnResult): void {
    const c = this.carryState;
    const last = c.lastTurn!;
    // The conversation before the failed turn is the reset run's own start: with the message
    // store the result carries the whole conversation; without it, the failed turn's messages
    // are the user message alone (a terminated turn) or replaced by the result's.
    const before: SessionCarry = {
      ...c,
      turnCount: last.turn - 1,
      modelCalls: Math.max(0, c.modelCalls - last.modelCalls),
      usage: subtractUsage(c.usage, last.usage),
      ...(c.spend ? { spend: subtractSpend(c.spend, last.spend ?? NO_SPEND) } : {}),
    };
    this.finished(r, before);
  }

  /** The retry did not happen or its run failed again: the failed turn stands, the session is idle. */
  retryEnded(why: string): void {
    if (this.lastTurn) this.lastTurn = { ...this.lastTurn, answer: `The retry failed: ${why}` };
    this.currentTurnId = undefined;
    this.pending = undefined;
    this.sleeping = undefined;
    this.status = 'idle';
  }

  /** A forked session: where it comes from and how its workspace was restored (shown by `status`). */
  forked(f: ForkSpec, p: ForkPrepared): void {
    this.forkView = { from: f.from.turnId, step: f.from.step, restored: p.restored.map((r) => r.path), problems: p.problems, ...(p.seeded !== undefined ? { seeded: p.seeded } : {}) };
    this.forkPoint = p.conversation.count;
  }

  rerunCompared(report: NonNullable<SessionState['rerun']>): void {
    this.rerunView = report;
  }

  onTurnStatus(s: TurnStatusSignal): void {
    if (s.turnId !== this.currentTurnId) return; // a late signal from an earlier turn
    this.status = s.status;
    this.pending = s.pending;
    this.sleeping = s.sleeping;
  }

  end(): void {
    this.status = 'ended';
  }

  shouldContinueAsNew(info: WorkflowInfo): boolean {
    return info.continueAsNewSuggested || info.historyLength >= this.input.config.limits.continueAsNewAfterEvents;
  }

  /** What the next run starts from, with what `status` shows of this one. */
  carry(): SessionCarry {
    const view = {
      ...(this.lastTurn ? { lastTurn: { ...this.lastTurn, answer: clipAnswer(this.lastTurn.answer) } } : {}),
      ...(this.forkView ? { fork: this.forkView } : {}),
      ...(this.rerunView ? { rerun: this.rerunView } : {}),
    };
    return Object.keys(view).length ? { ...this.carryState, view } : this.carryState;
  }

  view(): SessionState {
    const c = this.carryState;
    return {
      sessionId: this.input.sessionId,
      status: this.status,
      turnCount: c.turnCount,
      ...(this.currentTurnId ? { currentTurnId: this.currentTurnId } : {}),
      ...(this.pending ? { pending: this.pending } : {}),
      ...(this.sleeping ? { sleeping: this.sleeping } : {}),
      usage: c.usage,
      ...(c.spend ? { spend: c.spend } : {}),
      memory: c.memory,
      messageCount: c.conversation ? c.conversation.count : c.messages.length,
      model: `${this.input.config.model.provider}:${this.input.config.model.model}`,
      ...(this.lastTurn ? { lastTurn: this.lastTurn } : {}),
      ...(this.forkView ? { fork: this.forkView } : {}),
      ...(this.rerunView ? { rerun: this.rerunView } : {}),
      ...(c.mcpTools ? { mcp: c.mcpTools.servers } : {}),
      ...(c.toolMode ? { toolMode: c.toolMode } : {}),
      ...(c.host ? { host: c.host.id } : {}),
    };
  }
}

/** Most of a last answer carried into the next run (an answer may be a megabyte; the run's input is bounded). */
const CARRIED_ANSWER_CHARS = 16 * 1024;

function clipAnswer(answer: string): string {
  if (answer.length <= CARRIED_ANSWER_CHARS) return answer;
  return `${answer.slice(0, CARRIED_ANSWER_CHARS)}… (${answer.length - CARRIED_ANSWER_CHARS} more characters)`;
}
