/**
 * Background sub-agents, the session's side (deterministic/background.ts; the turns' side is
 * workflows/turn/background.ts). A background child tells the session it runs, and its waits on
 * people (shown by `status` and decided at the child, with its path, while no turn of the session
 * shows them); its end is a message to the session: given to the running turn at its next step
 * (a steer signal), or queued to start a turn when the session is idle. Each child's end is taken
 * once (by its turn id). Its spend joins the session's. The children still running are cancelled
 * when the session ends or is cancelled, and carried across continue-as-new.
 */
import { CancellationScope, getExternalWorkflowHandle, patched, setHandler } from '@temporalio/workflow';
import {
  backgroundMessage,
  backgroundResultSignal,
  backgroundStatusSignal,
  type BackgroundFrom,
  type BackgroundResult,
  countableFigures,
  type BackgroundStatus,
} from '../../deterministic/background';
import type { Spend } from '../../deterministic/budget';
import type { Usage } from '../../deterministic/types';
import { steerSignal, type SendMessageInput } from '../../deterministic/messages';
import type { SessionCarry, TurnInput } from '../../deterministic/session';
import type { Pending, SessionState } from '../../deterministic/session-state';
import { BACKGROUND_BUDGET_PATCH, BACKGROUND_PATCH } from '../turn/background';
import { addSpend } from '../../deterministic/budget';
import type { SessionTracker } from './tracker';

/** Since this patch a background status's or end's malformed figures (a negative or non-numeric spend, usage or hold) are not counted: taken only where one arrives. */
const BACKGROUND_FIGURES_PATCH = 'background-figures-checked';

/** A message of the session's queue: a person's, or a background child's end (`from`). */
export type QueuedMessage = SendMessageInput & { from?: BackgroundFrom };

/** How many taken ends the session remembers (a child's end is signalled once; this guards a repeat). */
const TAKEN_KEPT = 200;

type Running = NonNullable<SessionCarry['background']>['running'][number];

export class SessionBackground {
  private readonly running = new Map<string, Running>();
  private readonly taken: string[];
  /** The session has cancelled its children: one that says it runs after that is cancelled too. */
  private closed = false;

  constructor(
    carried: SessionCarry['background'],
    private readonly tracker: SessionTracker,
    private readonly queue: QueuedMessage[],
    private readonly ended: () => boolean,
  ) {
    for (const r of carried?.running ?? []) this.running.set(r.turnId, r);
    this.taken = [...(carried?.taken ?? [])];
    setHandler(backgroundStatusSignal, (s) => this.onStatus(s));
    setHandler(backgroundResultSignal, (r) => this.onResult(r));
  }

  private onStatus(s: BackgroundStatus): void {
    if (typeof s?.turnId !== 'string' || !Array.isArray(s.path) || this.taken.includes(s.turnId)) return;
    if (!patched(BACKGROUND_PATCH)) return;
    if (this.closed) {
      void CancellationScope.nonCancellable(() => getExternalWorkflowHandle(s.turnId).cancel()).catch(() => undefined);
      return;
    }
    // A deeper child's wait names that child; the session decides it there either way.
    const pending: Pending | undefined = s.pending && { ...s.pending, agent: { ...(s.pending.agent ?? { turnId: s.turnId, path: s.path }), background: true } };
    // What it may spend is said once, as it starts: its later statuses keep it held.
    const held = this.figures(s).held ?? this.running.get(s.turnId)?.held;
    this.running.set(s.turnId, { turnId: s.turnId, path: s.path, ...(pending ? { pending } : {}), ...(held ? { held } : {}) });
  }

  private async onResult(r: BackgroundResult): Promise<void> {
    if (typeof r?.turnId !== 'string' || this.taken.includes(r.turnId)) return;
    if (!patched(BACKGROUND_PATCH)) return;
    this.taken.push(r.turnId);
    if (this.taken.length > TAKEN_KEPT) this.taken.splice(0, this.taken.length - TAKEN_KEPT);
    this.running.delete(r.turnId);
    const { usage, spend } = this.figures(r);
    if (usage || spend) this.tracker.addSpent(usage, spend);
    if (this.ended() || this.closed) return;
    const { result: _r, usage: _u, spend: _s, ...from } = r;
    const text = backgroundMessage(r);
    // A running turn with nothing queued behind it reads it at its next step; else it is a turn of its own.
    const turnId = this.tracker.currentTurnId;
    if (turnId && this.queue.length === 0) {
      try {
        await getExternalWorkflowHandle(turnId).signal(steerSignal, { id: `background:${r.turnId}`, text, mode: 'queue' });
        return;
      } catch {
        // The turn closed before the signal reached it: the message becomes the next turn.
      }
    }
    this.queue.push({ text, from });
  }

  /** A status's or an end's figures as the session counts them: a malformed one (forged: a child sends only its own counts) is left out. */
  private figures<F extends { usage?: Usage; spend?: Spend; held?: Spend }>(f: F): Pick<F, 'usage' | 'spend' | 'held'> {
    const ok = countableFigures(f);
    const dropped = (f.usage && !ok.usage) || (f.spend && !ok.spend) || (f.held && !ok.held);
    return dropped && patched(BACKGROUND_FIGURES_PATCH) ? ok : f;
  }

  /**
   * The turn's input with what it needs of background children: those running, who sent its
   * message, and the session's budget spent with what the running ones may still spend held
   * (a child's end gives back what it did not spend: its spend replaces its hold).
   */
  turnInput(input: TurnInput, msg: QueuedMessage): TurnInput {
    const held = [...this.running.values()].flatMap((r) => (r.held ? [r.held] : []));
    const budget = input.sessionBudget && held.length && patched(BACKGROUND_BUDGET_PATCH) ? { sessionBudget: { ...input.sessionBudget, spent: held.reduce(addSpend, input.sessionBudget.spent) } } : {};
    return { ...input, ...(this.running.size ? { backgroundRunning: [...this.running.keys()] } : {}), ...(msg.from ? { from: msg.from } : {}), ...budget };
  }

  /** The session's state with its background children still running, and a child's wait when no turn of it waits. */
  view(viewed: SessionState): SessionState {
    if (viewed.status === 'ended') return viewed;
    const running = [...this.running.values()];
    const state = running.length ? { ...viewed, background: running.map((r) => ({ turnId: r.turnId, path: r.path, ...(r.pending ? { waiting: true as const } : {}) })) } : viewed;
    if (state.pending) return state;
    const waiting = running.find((r) => r.pending)?.pending;
    if (!waiting) return state;
    const status = waiting.kind === 'question' ? 'waiting_for_user' : waiting.kind === 'budget' ? 'waiting_for_budget' : 'waiting_for_approval';
    return { ...state, status, pending: waiting };
  }

  /** What the next run starts from (nothing when no child ever ran). */
  carry(): SessionCarry['background'] {
    return this.running.size || this.taken.length ? { running: [...this.running.values()], taken: [...this.taken] } : undefined;
  }

  /** The session ends or is cancelled: its background children still running are cancelled (not waited for). */
  async cancelAll(): Promise<void> {
    this.closed = true;
    const ids = [...this.running.keys()];
    this.running.clear();
    await CancellationScope.nonCancellable(() => Promise.all(ids.map((id) => getExternalWorkflowHandle(id).cancel().catch(() => undefined))));
  }
}
