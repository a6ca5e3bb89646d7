/**
 * A turn's spend and budgets. Every model call, compression and wasted attempt is charged as it
 * returns, from the usage the activities record and the session's pricing (what the ledger reads
 * back from history, so the two agree). Before each model call the turn checks its budgets with a
 * conservative estimate of the call; one that would pass a budget waits for a person
 * (`waiting_for_budget`): raised, the turn goes on; stopped, or nobody deciding within
 * limits.approvalTimeoutMs, it ends `budget_exceeded` with its work kept. An eval trial has
 * nobody to ask: it ends at once. Only turns with a budget wait, and no recorded history has
 * one, so the commands of recorded turns are unchanged: no patch.
 */
import { patched, setHandler } from '@temporalio/workflow';
import type { ModelCallInput, ModelReply } from '../../deterministic/activity-types';
import type { CompressContextInput, CompressContextResult } from '../../deterministic/context/types';
import type { RecordedLedger, TurnInput, TurnResult, TurnResume } from '../../deterministic/session';
import type { Pending } from '../../deterministic/session-state';
import { countEntries, emptyLedgerTally, ledgerEntries, mergeTallies, totalOf, type CallOutcome } from '../../deterministic/ledger';
import type { Usage } from '../../deterministic/types';
import {
  addRaise,
  addSpend,
  budgetBreach,
  budgetLine,
  callEstimate,
  NO_SPEND,
  OUTPUT_ESTIMATE_TOKENS,
  type Budget,
  type BudgetBreach,
  type BudgetLimit,
  type BudgetRaises,
  type Spend,
} from '../../deterministic/budget';
import { decideBudgetUpdate, type BudgetDecisionInput, type BudgetDecisionResult } from '../../deterministic/messages';

/** Waits on a person for a pending item; resolves false on timeout. */
type HumanWait = (pending: Pending, done: () => boolean, timeoutMs: number) => Promise<boolean>;

/** What the turn spent, the raises given and its tally, as its result and its next run carry them. */
export interface Spent {
  spend: Spend;
  raises: BudgetRaises;
  ledger: RecordedLedger;
  /** What background children count against this turn's budgets (held while they run, spent once ended); absent when nothing. */
  children?: Spend;
}

/**
 * Since this patch a turn that continues as new carries what its background children count
 * against its budgets (TurnResume.backgroundCounted); before it the next run dropped their holds
 * and could spend them again. Taken only where a run with such children continues.
 */
export const BACKGROUND_HOLD_CARRIED_PATCH = 'background-hold-carried';

export class TurnBudget {
  /** Every call counted as it returns (deterministic/ledger.ts): the result records it, the budget reads its total. */
  private tally: RecordedLedger;
  /** What a run continued from one recorded before the tally was carried spent (none since). */
  private readonly base: Spend;
  private raises: BudgetRaises;
  /** Prompt and completion tokens of the last reply: the next prompt holds at least these. */
  private lastContext = 0;
  private pending: BudgetBreach | undefined;
  private decision: BudgetDecisionInput | undefined;
  /** What background children started by this turn may spend, by child turn, while they run. */
  private readonly held = new Map<string, Spend>();
  /** What those that ended while this turn ran spent: their session counts it, this turn's budgets count it too. */
  private childrenSpent: Spend;

  constructor(private readonly input: TurnInput) {
    this.childrenSpent = input.resume?.backgroundCounted ?? NO_SPEND;
    const pricing = input.config.pricing;
    this.tally = input.resume?.ledger ?? { ...emptyLedgerTally(), exact: !input.resume, ...(pricing ? { pricing } : {}) };
    this.base = input.resume?.ledger ? { tokens: 0, nanoUsd: 0 } : (input.resume?.spend ?? NO_SPEND);
    this.raises = input.resume?.budgetRaised ?? {};
    if (input.config.limits.budget) setHandler(decideBudgetUpdate, (d) => this.decide(d), { validator: (d) => this.validate(d) });
  }

  /** The model activity, charging what each call used (and what its failed attempts wasted). */
  charging(call: (req: ModelCallInput) => Promise<ModelReply>) {
    return async (req: ModelCallInput): Promise<ModelReply> => {
      const call0 = { kind: req.purpose === 'compress' ? ('compression' as const) : ('model' as const), step: req.step, callIndex: req.callIndex, model: req.model.model };
      try {
        const reply = await call(req);
        const corrections = (reply.protocol?.corrections ?? []).map((c) => (c as { usage?: Usage }).usage).filter((u): u is Usage => typeof u?.total_tokens === 'number');
        this.count({ ...call0, attempts: reply.attempt ?? 1, usage: reply.usage, ...(reply.wasted ? { wasted: reply.wasted } : {}), ...(corrections.length ? { corrections } : {}) });
        this.lastContext = reply.usage.prompt_tokens + reply.usage.completion_tokens;
        return reply;
      } catch (err) {
        const d = failureOf(err);
        // A call cancelled, or lost with its worker, says nothing of its attempts: only history knows.
        if (d?.attempt) this.count({ ...call0, attempts: d.attempt, ...(d.wasted ? { wasted: d.wasted } : {}) });
        else this.tally = { ...this.tally, exact: false };
        throw err;
      }
    };
  }

  /** The compression activity, charging its summary call. */
  chargingCompression(compress: (req: CompressContextInput) => Promise<CompressContextResult>) {
    return async (req: CompressContextInput): Promise<CompressContextResult> => {
      let c: CompressContextResult;
      try {
        c = await compress(req);
      } catch (err) {
        this.tally = { ...this.tally, exact: false };
        throw err;
      }
      const attempts = c.attempt ?? 1;
      const call0 = { kind: 'compression' as const, step: req.step, callIndex: req.callIndex, model: req.model.model };
      // Without a summary call only its failed attempts count (as history tells them).
      if (c.summary_usage) this.count({ ...call0, attempts, usage: c.summary_usage });
      else if (attempts > 1) this.count({ ...call0, attempts: attempts - 1 });
      // The context shrank: the last reply's size no longer bounds the next prompt.
      if (c.compressed) this.lastContext = 0;
      return c;
    };
  }

  /**
   * A sub-agent's turn spent this (its own tally, priced with its own model's prices): it counts
   * toward this turn's spend, budgets and result, as if this turn had made its calls.
   */
  addChild(ledger: RecordedLedger | undefined): void {
    if (!ledger) return;
    const { exact, pricing } = this.tally;
    this.tally = { ...mergeTallies(this.tally, ledger), exact: exact && ledger.exact, ...(pricing ? { pricing } : {}) };
  }

  /** A background child starts: what its budget lets it spend counts toward this turn's budgets until it ends. */
  hold(turnId: string, spend: Spend): void {
    this.held.set(turnId, spend);
  }

  /** A background child ended while this turn runs: what it spent replaces what was held (it fails: nothing known, nothing counted). */
  release(turnId: string, spent: Spend | undefined): void {
    if (this.held.delete(turnId) && spent) this.childrenSpent = addSpend(this.childrenSpent, spent);
  }

  /**
   * The budget a sub-agent's turn runs with: its own, each limit no more than what is left of this
   * turn's (with the raises given) and the session's budget as this session has it, with what the
   * session spent so far, this turn included. `left: false` when this turn has nothing left.
   */
  childBudget(own: Budget | undefined): { budget?: Budget; sessionBudget?: TurnInput['sessionBudget']; left: boolean } {
    const mine = this.input.config.limits.budget;
    if (!mine) return own ? { budget: own, left: true } : { left: true };
    const turn: BudgetLimit = { ...(own?.turn ?? {}) };
    let left = true;
    for (const unit of ['tokens', 'usd'] as const) {
      const limit = mine.turn?.[unit];
      if (limit === undefined) continue;
      const counted = this.counted;
      const spent = unit === 'tokens' ? counted.tokens : (counted.nanoUsd ?? 0) / 1e9;
      const rest = limit + (this.raises.turn?.[unit] ?? 0) - spent;
      if (rest <= 0) left = false;
      turn[unit] = Math.min(turn[unit] ?? Infinity, unit === 'tokens' ? Math.floor(rest) : rest);
    }
    const session = mine.session ? sumLimits(mine.session, this.input.sessionBudget?.raised) : own?.session;
    const budget: Budget = { ...(Object.keys(turn).length ? { turn } : {}), ...(session ? { session } : {}) };
    const spentBefore = addSpend(this.input.sessionBudget?.spent ?? NO_SPEND, this.counted);
    return { ...(budget.turn || budget.session ? { budget } : {}), ...(mine.session ? { sessionBudget: { spent: spentBefore, ...(this.raises.session ? { raised: this.raises.session } : {}) } } : {}), left };
  }

  /** What was spent so far, the raises given and the tally. */
  spent(): Spent {
    const children = [...this.held.values()].reduce(addSpend, this.childrenSpent);
    const any = children.tokens > 0 || (children.nanoUsd ?? 0) > 0;
    return { spend: this.spend, raises: this.raises, ledger: this.tally, ...(any ? { children } : {}) };
  }

  /** The tally's total as spend (tokens, nano-dollars when priced). */
  private get spend(): Spend {
    const t = totalOf(this.tally);
    return addSpend(this.base, { tokens: t.total_tokens, ...(t.nanoUsd !== undefined ? { nanoUsd: t.nanoUsd } : {}) });
  }

  /** What this turn's budgets count: its own spend, and its background children's (held while they run, spent once ended). */
  private get counted(): Spend {
    return [...this.held.values()].reduce(addSpend, addSpend(this.spend, this.childrenSpent));
  }

  /** Before a model call: undefined to go on, or why the turn stops (after a person stopped it or let it time out). */
  async admit(step: number, contextTokens: number, wait: HumanWait): Promise<string | undefined> {
    const { limits, pricing } = this.input.config;
    if (!limits.budget) return undefined;
    const session = this.input.sessionBudget;
    for (;;) {
      const estimate = callEstimate(contextTokens, this.lastContext, limits.maxOutputTokens ?? OUTPUT_ESTIMATE_TOKENS, pricing);
      const raises = { ...this.raises, session: sumLimits(session?.raised, this.raises.session) };
      const counted = this.counted;
      const breach = budgetBreach(limits.budget, raises, { turn: counted, session: addSpend(session?.spent ?? NO_SPEND, counted) }, estimate);
      if (!breach) return undefined;
      const why = `Stopped before the next model call: ${budgetLine(breach)}.`;
      if (this.input.evalHumans) return why;
      this.pending = breach;
      this.decision = undefined;
      const decided = await wait({ kind: 'budget', step, ...breach }, () => this.decision !== undefined, limits.approvalTimeoutMs);
      // Set by the update's handler while we waited (TypeScript cannot see that through the callback).
      const d = this.decision as BudgetDecisionInput | undefined;
      this.pending = undefined;
      this.decision = undefined;
      if (!decided || !d) return `${why} Nobody raised it in time.`;
      if (d.stop) return `${why} ${d.reason ? `Stopped by a person: ${d.reason}` : 'Stopped by a person.'}`;
    }
  }

  private count(o: CallOutcome): void {
    const { exact, pricing } = this.tally;
    this.tally = { ...countEntries(this.tally, ledgerEntries(o, this.input.config.pricing)), exact, ...(pricing ? { pricing } : {}) };
  }

  private validate(d: BudgetDecisionInput): void {
    const p = this.pending;
    if (!p) throw new Error('no budget wait is pending in this turn');
    if (!d || Boolean(d.raise) === Boolean(d.stop)) throw new Error('either raise the budget or stop the turn');
    if (d.raise) {
      if (d.raise.unit !== p.unit) throw new Error(`the ${p.scope} budget is in ${p.unit}; raise it in ${p.unit}`);
      const n = d.raise.amount;
      if (typeof n !== 'number' || !Number.isFinite(n) || n <= 0 || n > (p.unit === 'usd' ? 1_000_000 : 1e12)) throw new Error('the raise must be a positive amount');
      if (p.unit === 'tokens' && !Number.isInteger(n)) throw new Error('tokens are whole');
    }
  }

  private decide(d: BudgetDecisionInput): BudgetDecisionResult {
    const p = this.pending!;
    this.decision = d;
    if (d.stop) return { scope: p.scope, unit: p.unit, stopped: true };
    this.raises = addRaise(this.raises, p.scope, p.unit, d.raise!.amount);
    return { scope: p.scope, unit: p.unit, limit: p.limit + d.raise!.amount };
  }
}

/** The result fields of what a turn spent (absent for a loop run without a budget keeper). */
export function resultSpend(s: Spent | undefined): Pick<TurnResult, 'spend' | 'sessionBudgetRaised' | 'ledger'> {
  if (!s) return {};
  return { spend: s.spend, ...(s.raises.session ? { sessionBudgetRaised: s.raises.session } : {}), ledger: s.ledger };
}

/** The resume fields of what a turn spent, for the run it continues in. */
export function resumeSpend(s: Spent | undefined): Pick<TurnResume, 'budgetRaised' | 'ledger' | 'backgroundCounted'> {
  if (!s) return {};
  const carried = s.children && patched(BACKGROUND_HOLD_CARRIED_PATCH) ? { backgroundCounted: s.children } : {};
  return { ...(Object.keys(s.raises).length ? { budgetRaised: s.raises } : {}), ledger: s.ledger, ...carried };
}

/** Two sets of raises added up. */
export function sumLimits(a: BudgetLimit | undefined, b: BudgetLimit | undefined): BudgetLimit | undefined {
  if (!a) return b;
  if (!b) return a;
  return {
    ...(a.tokens !== undefined || b.tokens !== undefined ? { tokens: (a.tokens ?? 0) + (b.tokens ?? 0) } : {}),
    ...(a.usd !== undefined || b.usd !== undefined ? { usd: (a.usd ?? 0) + (b.usd ?? 0) } : {}),
  };
}

/** The attempts a model call that failed for good took and what they wasted, from its failure's details (activities/usage-waste.ts). */
export function failureOf(err: unknown): { attempt: number; wasted?: Usage } | undefined {
  for (let e = err as { cause?: unknown; details?: unknown[] } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    const d = e.details?.[0] as { attempt?: unknown; wasted?: Usage } | undefined;
    if (typeof d?.attempt === 'number') return { attempt: d.attempt, ...(typeof d.wasted?.total_tokens === 'number' ? { wasted: d.wasted } : {}) };
  }
  return undefined;
}
