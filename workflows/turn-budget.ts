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
import { setHandler } from '@temporalio/workflow';
import type { ModelCallInput, ModelReply } from '../common/activity-types';
import type { CompressContextInput, CompressContextResult } from '../common/context/types';
import type { Pending, TurnInput, TurnResult, TurnResume } from '../common/session';
import type { Usage } from '../common/types';
import {
  addRaise,
  addSpend,
  budgetBreach,
  budgetLine,
  callEstimate,
  NO_SPEND,
  OUTPUT_ESTIMATE_TOKENS,
  spendOf,
  type BudgetBreach,
  type BudgetLimit,
  type BudgetRaises,
  type Spend,
} from '../common/budget';
import { decideBudgetUpdate, type BudgetDecisionInput, type BudgetDecisionResult } from './definitions';

/** Waits on a person for a pending item; resolves false on timeout. */
export type HumanWait = (pending: Pending, done: () => boolean, timeoutMs: number) => Promise<boolean>;

/** What the turn spent and the raises given, as its result and its next run carry them. */
export interface Spent {
  spend: Spend;
  raises: BudgetRaises;
}

export class TurnBudget {
  private spend: Spend;
  private raises: BudgetRaises;
  /** Prompt and completion tokens of the last reply: the next prompt holds at least these. */
  private lastContext = 0;
  private pending: BudgetBreach | undefined;
  private decision: BudgetDecisionInput | undefined;

  constructor(private readonly input: TurnInput) {
    this.spend = input.resume?.spend ?? NO_SPEND;
    this.raises = input.resume?.budgetRaised ?? {};
    if (input.config.limits.budget) setHandler(decideBudgetUpdate, (d) => this.decide(d), { validator: (d) => this.validate(d) });
  }

  /** The model activity, charging what each call used (and what its failed attempts wasted). */
  charging(call: (req: ModelCallInput) => Promise<ModelReply>) {
    return async (req: ModelCallInput): Promise<ModelReply> => {
      try {
        const reply = await call(req);
        this.charge(reply.usage, reply.wasted);
        this.lastContext = reply.usage.prompt_tokens + reply.usage.completion_tokens;
        return reply;
      } catch (err) {
        this.charge(undefined, wastedOf(err));
        throw err;
      }
    };
  }

  /** The compression activity, charging its summary call. */
  chargingCompression(compress: (req: CompressContextInput) => Promise<CompressContextResult>) {
    return async (req: CompressContextInput): Promise<CompressContextResult> => {
      const c = await compress(req);
      this.charge(c.summary_usage, undefined);
      // The context shrank: the last reply's size no longer bounds the next prompt.
      if (c.compressed) this.lastContext = 0;
      return c;
    };
  }

  /** What was spent so far and the raises given. */
  spent(): Spent {
    return { spend: this.spend, raises: this.raises };
  }

  /** Before a model call: undefined to go on, or why the turn stops (after a person stopped it or let it time out). */
  async admit(step: number, contextTokens: number, wait: HumanWait): Promise<string | undefined> {
    const { limits, pricing } = this.input.config;
    if (!limits.budget) return undefined;
    const session = this.input.sessionBudget;
    for (;;) {
      const estimate = callEstimate(contextTokens, this.lastContext, limits.maxOutputTokens ?? OUTPUT_ESTIMATE_TOKENS, pricing);
      const raises = { ...this.raises, session: sumLimits(session?.raised, this.raises.session) };
      const breach = budgetBreach(limits.budget, raises, { turn: this.spend, session: addSpend(session?.spent ?? NO_SPEND, this.spend) }, estimate);
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

  private charge(usage: Usage | undefined, wasted: Usage | undefined): void {
    const pricing = this.input.config.pricing;
    if (usage) this.spend = addSpend(this.spend, spendOf(usage, pricing));
    if (wasted) this.spend = addSpend(this.spend, spendOf(wasted, pricing));
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
export function resultSpend(s: Spent | undefined): Pick<TurnResult, 'spend' | 'sessionBudgetRaised'> {
  if (!s) return {};
  return { spend: s.spend, ...(s.raises.session ? { sessionBudgetRaised: s.raises.session } : {}) };
}

/** The resume fields of what a turn spent, for the run it continues in. */
export function resumeSpend(s: Spent | undefined): Pick<TurnResume, 'spend' | 'budgetRaised'> {
  if (!s) return {};
  return { spend: s.spend, ...(Object.keys(s.raises).length ? { budgetRaised: s.raises } : {}) };
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

/** What a model call that failed for good wasted, from its failure's details (see activities/usage-waste.ts). */
export function wastedOf(err: unknown): Usage | undefined {
  for (let e = err as { cause?: unknown; details?: unknown[] } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    const w = (e.details?.[0] as { wasted?: Usage } | undefined)?.wasted;
    if (w && typeof w.total_tokens === 'number') return w;
  }
  return undefined;
}
