/**
 * Background sub-agents, the turns' side (deterministic/background.ts has the rest; the session's
 * side is workflows/session/background.ts). The parent turn starts the child with
 * ParentClosePolicy ABANDON, so the child outlives it, and returns at once; the child tells its
 * session that it runs (the session cancels it when the session ends), sends its waits on people
 * to the session (notifyParent reads its memo), and signals its end to the session. That signal is
 * a command of the child's last workflow task: a worker lost before it is sent sends it on replay,
 * and once sent it is in the session's history; the session takes each child's end once.
 */
import {
  ApplicationFailure,
  CancellationScope,
  ContinueAsNew,
  getExternalWorkflowHandle,
  ParentClosePolicy,
  patched,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import {
  backgroundBound,
  backgroundResultSignal,
  backgroundStarted,
  backgroundStatusSignal,
  DEFAULT_MAX_BACKGROUND_AGENTS,
  heldBy,
  type BackgroundFrom,
  type BackgroundMemo,
  type BackgroundResult,
} from '../../deterministic/background';
import { rootCauseMessage, toolError } from '../../deterministic/errors';
import type { TurnStatusSignal } from '../../deterministic/messages';
import type { TurnInput, TurnResult } from '../../deterministic/session';
import { parseSubAgentTurnId, subAgentResult } from '../../deterministic/sub-agents';
import type { ToolResult } from '../../deterministic/types';

/** Since this patch a sub-agent listed `background: true` runs so: taken where a background call or child runs, or a child's end reaches the session. */
export const BACKGROUND_PATCH = 'background-sub-agents';
/**
 * Since this patch what a background child may spend (its turn budget, carved from its parent's)
 * is held against its parent turn's budget and its session's while it runs, and replaced by what
 * it spent when it ends: taken where a child with a budget starts, and where a hold counts.
 */
export const BACKGROUND_BUDGET_PATCH = 'background-budget-held';

/** The background children a turn may count: those its session had running when it began, and those it started (until they end). */
export class BackgroundStarts {
  private readonly running: Set<string>;
  private readonly started = new Set<string>();

  constructor(private readonly input: TurnInput) {
    this.running = new Set(input.backgroundRunning ?? []);
  }

  /**
   * Runs a background call holding a place among the running ones (calls of one step run
   * together: each holds its place before it awaits anything), or refuses it when none is left
   * (limits.maxBackgroundAgents). A call that started no child gives its place back.
   */
  async holding(name: string, turnId: string, call: () => Promise<ToolResult>): Promise<ToolResult> {
    const refused = backgroundBound({ name, running: this.running.size, max: this.input.config.limits.maxBackgroundAgents ?? DEFAULT_MAX_BACKGROUND_AGENTS });
    if (refused) return refused;
    this.running.add(turnId);
    const out = await call();
    if (!this.started.has(turnId)) this.running.delete(turnId);
    return out;
  }

  /**
   * Starts the child and returns the call's result at once: that it started, with its turn id.
   * `ended` hears of the child's end while this turn runs (its result; undefined when it failed or never started).
   */
  async start(name: string, child: TurnInput, ended: (r: TurnResult | undefined) => void = () => undefined): Promise<ToolResult> {
    const memo: BackgroundMemo = { backgroundOf: this.input.sessionId, agentPath: child.subAgent?.path ?? [name] };
    try {
      const handle = await startChild('turnWorkflow', { workflowId: child.turnId, args: [child], parentClosePolicy: ParentClosePolicy.ABANDON, memo: { ...memo } });
      this.started.add(child.turnId);
      // This turn hears of the child's end while it runs itself: the child no longer counts.
      void handle.result().then(
        (r: TurnResult) => {
          this.running.delete(child.turnId);
          ended(r);
        },
        () => {
          this.running.delete(child.turnId);
          ended(undefined);
        },
      );
    } catch (err) {
      ended(undefined);
      return toolError('SUB_AGENT_FAILED', `${name} was not started: ${rootCauseMessage(err)}`, { recoverable: true, suggestion: 'try again later, or do the task yourself' });
    }
    return backgroundStarted(name, child.turnId);
  }
}

/** The session a background child reports to, and its path of agents; undefined for any other turn. */
export function backgroundMemo(): BackgroundMemo | undefined {
  const memo = workflowInfo().memo as Partial<BackgroundMemo> | undefined;
  return typeof memo?.backgroundOf === 'string' && Array.isArray(memo.agentPath) ? { backgroundOf: memo.backgroundOf, agentPath: memo.agentPath } : undefined;
}

/** A background child's status goes to its session (the turn that started it may be gone): false for any other turn. */
export async function toSession(status: TurnStatusSignal): Promise<boolean> {
  const memo = backgroundMemo();
  if (!memo) return false;
  await getExternalWorkflowHandle(memo.backgroundOf).signal(backgroundStatusSignal, { ...status, path: memo.agentPath });
  return true;
}

/**
 * Runs a background child turn: it tells its session it runs (a session already closed ends it
 * before any step), plays the turn, and signals its end (its result, or its failure) to the
 * session. A run continued as new signals nothing: the next run does.
 */
export async function runAsBackgroundChild(input: TurnInput, play: () => Promise<TurnResult>): Promise<TurnResult> {
  patched(BACKGROUND_PATCH);
  const place = input.subAgent!;
  const session = getExternalWorkflowHandle(input.sessionId);
  const name = place.path[place.path.length - 1] ?? 'sub-agent';
  const from: BackgroundFrom = { turnId: input.turnId, agent: name, path: place.path, callId: parseSubAgentTurnId(input.turnId)?.callId ?? '', parentTurnId: place.parentTurnId };
  if (!input.resume) {
    try {
      const held = heldBy(input.config.limits.budget?.turn);
      await session.signal(backgroundStatusSignal, { turnId: input.turnId, status: 'running', path: place.path, ...(held && patched(BACKGROUND_BUDGET_PATCH) ? { held } : {}) });
    } catch {
      throw ApplicationFailure.nonRetryable(`session ${input.sessionId} has ended: its background sub-agent does not run`, 'SESSION_ENDED');
    }
  }
  const deliver = (r: BackgroundResult) => CancellationScope.nonCancellable(() => session.signal(backgroundResultSignal, r)).catch(() => undefined);
  let result: TurnResult;
  try {
    result = await play();
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err;
    await deliver({ ...from, result: toolError('SUB_AGENT_FAILED', `${name} failed: ${rootCauseMessage(err)}`, { recoverable: true, suggestion: `see its turn with \`harness trace ${input.turnId}\`` }) });
    throw err;
  }
  await deliver({ ...from, result: subAgentResult(name, result), usage: result.usage, ...(result.spend ? { spend: result.spend } : {}) });
  return result;
}
