/**
 * Sub-agents, the turn's side (deterministic/sub-agents.ts has the rest). A call of
 * `agent__<name>` starts a child turn workflow, `<turnId>/agent-<callId>`, running the sub-agent as
 * its worker declares it (the resolveSubAgent local activity refuses one the session's agent does
 * not list, whatever this turn's input says): its own instructions, tools, policy, model and
 * limits, a budget carved from this turn's (budget.ts), and a history of its own, so trace,
 * retry and replay read it as any turn. Its answer (or structured output) is the call's result;
 * its spend joins this turn's. Its waits on people (approvals, questions, budgets) come here as
 * the turnStatus signal a turn sends its parent, and go on up to the session with the path of
 * agents (`lead › researcher`) and the child turn that waits, where decisions and answers go.
 *
 * A sub-agent listed `background: true` is started and left running (background.ts).
 *
 * Behind the `sub-agents` patch, taken directly at the first such call (never through `since`):
 * a run that makes none records no marker, and no recorded turn had sub-agents to offer.
 */
import { ApplicationFailure, CancellationScope, ChildWorkflowFailure, executeChild, isCancellation, ParentClosePolicy, patched, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { ToolOutcome } from '../../deterministic/activity-types';
import { failureType, rootCauseMessage, toolError } from '../../deterministic/errors';
import { turnStatusSignal, type TurnStatusSignal } from '../../deterministic/messages';
import type { TurnInput, TurnResult } from '../../deterministic/session';
import type { SessionConfig } from '../../deterministic/session-config';
import type { Pending, TurnState } from '../../deterministic/session-state';
import {
  DEFAULT_MAX_AGENT_DEPTH,
  DEFAULT_MAX_SUB_AGENT_CALLS,
  subAgentBound,
  subAgentDefinition,
  subAgentOf,
  subAgentResult,
  subAgentTurnId,
  SUB_AGENT_NOT_ALLOWED,
} from '../../deterministic/sub-agents';
import type { ToolDefinition } from '../../deterministic/tools';
import { discoverActivity, type Activities } from '../activity-options';
import type { McpToolSet } from '../../deterministic/mcp';
import { mcpScopeOf } from '../../deterministic/mcp-scope';
import { TOOLS_BY_REF } from './mcp';
import type { TurnBudget } from './budget';
import type { HostRoute } from './host-route';
import type { ToolExecution } from './loop';
import type { ModelCaller } from './model-call';
import { notifyParent } from './handlers';
import type { RunEvents } from './run-events';
import { BACKGROUND_BUDGET_PATCH, BACKGROUND_PATCH, BackgroundStarts } from './background';
import { heldBy } from '../../deterministic/background';

/** Since this patch a call of `agent__<name>` starts the sub-agent's child turn. */
export const SUB_AGENTS_PATCH = 'sub-agents';

// Only the worker's declarations are read: quick, and the same answer on any worker of the queue.
const { resolveSubAgent } = proxyLocalActivities<Activities>({ startToCloseTimeout: '10 seconds', retry: { initialInterval: '1s', maximumAttempts: 3, nonRetryableErrorTypes: [SUB_AGENT_NOT_ALLOWED] } });

/** The sub-agents this turn offers, as tools (none for a session whose agent has none). */
export function subAgentTools(input: TurnInput): ToolDefinition[] {
  return (input.config.subAgents ?? []).map(subAgentDefinition);
}

/** The agents from the session's down to this turn's: the session's agent for a session's own turn. */
function pathOf(input: TurnInput): string[] {
  return input.subAgent?.path ?? [input.config.agent ?? 'session'];
}

/**
 * The turn's sub-agent calls: `run` wraps the turn's executeTool, taking the calls of the
 * sub-agents it offers and handing every other call on. Its signal handler is registered as it
 * is made (before the turn's first await), only in a turn that offers sub-agents.
 */
export class SubAgents {
  /**
   * Sub-agent calls the turn made (bounded by limits.maxSubAgentCalls): a run that continues a long
   * turn counts those its records carry (records stored in chunks by then are not counted).
   */
  private calls: number;
  /** What each child waits for now, by its turn id, in the order they began waiting. */
  private readonly waiting = new Map<string, Pending>();
  private readonly offered: ReadonlySet<string>;
  /** The sub-agent each child turn runs, by its turn id. */
  private readonly children = new Map<string, string>();
  private readonly background: BackgroundStarts;

  constructor(
    private readonly input: TurnInput,
    private readonly state: TurnState,
    private readonly budget: TurnBudget,
    /** The turn's host route, once it has one (it prepares after its handlers are registered). */
    private readonly route: () => HostRoute | undefined,
    private readonly models: Pick<ModelCaller, 'activity'>,
    private readonly events: RunEvents,
  ) {
    this.offered = new Set((input.config.subAgents ?? []).map((a) => a.name));
    this.background = new BackgroundStarts(input);
    this.calls = (input.resume?.toolCalls ?? []).filter((c) => subAgentOf(c.name) !== undefined && c.error_type !== 'SUB_AGENT_LIMIT').length;
    if (this.offered.size) setHandler(turnStatusSignal, (s) => this.childStatus(s));
  }

  /** The turn's executeTool with its sub-agents' calls taken here. */
  run(execute: (call: ToolExecution) => Promise<ToolOutcome>): (call: ToolExecution) => Promise<ToolOutcome> {
    return (call) => {
      const name = subAgentOf(call.name);
      if (name === undefined || !this.offered.has(name) || call.custom || call.mcp) return execute(call);
      // A background sub-agent (background.ts) holds a place among the session's running ones from its call on.
      if (this.isBackground(name)) return this.background.holding(name, subAgentTurnId(this.input.turnId, call.callId), () => this.call(name, call, true));
      return this.call(name, call, false);
    };
  }

  private isBackground(name: string): boolean {
    return (this.input.config.subAgents ?? []).some((a) => a.name === name && a.background) && patched(BACKGROUND_PATCH);
  }

  private async call(name: string, call: ToolExecution, background: boolean): Promise<ToolOutcome> {
    patched(SUB_AGENTS_PATCH);
    const { limits } = this.input.config;
    const depth = (this.input.subAgent?.depth ?? 0) + 1;
    const bound = subAgentBound({ name, depth, maxDepth: limits.maxAgentDepth ?? DEFAULT_MAX_AGENT_DEPTH, calls: this.calls, maxCalls: limits.maxSubAgentCalls ?? DEFAULT_MAX_SUB_AGENT_CALLS });
    if (bound) return bound;
    this.calls++;
    let config: SessionConfig;
    try {
      this.events.add('local');
      config = await resolveSubAgent({ sessionId: this.input.sessionId, parent: this.input.config, name });
    } catch (err) {
      if (isCancellation(err)) throw err;
      const refused = failureType(err) === SUB_AGENT_NOT_ALLOWED;
      return toolError(refused ? 'SUB_AGENT_NOT_ALLOWED' : 'SUB_AGENT_FAILED', `${name} was not started: ${rootCauseMessage(err)}`, {
        recoverable: !refused,
        suggestion: refused ? 'continue with the tools and agents you were offered' : 'try again later, or do the task yourself',
      });
    }
    const carved = this.budget.childBudget(config.limits.budget);
    if (!carved.left) {
      return toolError('SUB_AGENT_LIMIT', `${name} was not started: this turn's budget is spent.`, { recoverable: false, suggestion: 'finish with what you have' });
    }
    // A background child's carve counts toward this turn's budgets while it runs (held before any
    // await, so calls of one step carve from what the others left); what it spent, once it ends.
    const held = background ? heldBy(carved.budget?.turn) : undefined;
    const holding = held !== undefined && patched(BACKGROUND_BUDGET_PATCH);
    if (holding) this.budget.hold(subAgentTurnId(this.input.turnId, call.callId), held);
    const mcpTools = await this.discover(config);
    const { budget: _own, ...limitsNoBudget } = config.limits;
    const turnId = subAgentTurnId(this.input.turnId, call.callId);
    const route = this.route();
    const child: TurnInput = {
      sessionId: this.input.sessionId,
      turn: this.input.turn,
      turnId,
      config: {
        ...config,
        limits: { ...limitsNoBudget, ...(carved.budget ? { budget: carved.budget } : {}) },
        // A scripted sub-agent plays its own script, not its session's.
        model: config.model.provider === 'scripted' ? { ...config.model, scriptKey: turnId } : config.model,
      },
      history: [],
      memory: {},
      userMessage: String((call.args as { task?: unknown }).task ?? ''),
      modelCallBase: 0,
      ...(mcpTools ? { mcpTools } : {}),
      ...(route?.current ? { host: route.current } : {}),
      ...(carved.sessionBudget ? { sessionBudget: carved.sessionBudget } : {}),
      ...(this.input.evalHumans ? { evalHumans: this.input.evalHumans } : {}),
      subAgent: { depth, path: [...pathOf(this.input), name], parentTurnId: this.input.turnId, ...(background ? { background: true as const } : {}) },
    };
    if (background) return this.background.start(name, child, holding ? (r) => this.budget.release(turnId, r?.spend) : undefined);
    this.children.set(turnId, name);
    let result: TurnResult;
    try {
      result = await this.models.activity(() =>
        executeChild('turnWorkflow', { workflowId: turnId, args: [child], parentClosePolicy: ParentClosePolicy.TERMINATE }),
      ) as TurnResult;
    } catch (err) {
      if (isCancellation(err)) throw err;
      if (!(err instanceof ChildWorkflowFailure) && !(err instanceof ApplicationFailure)) throw err;
      return toolError('SUB_AGENT_FAILED', `${name} failed: ${rootCauseMessage(err)}`, { recoverable: true, suggestion: `see its turn with \`harness trace ${turnId}\`, or do the task yourself` });
    } finally {
      this.forget(turnId);
    }
    this.budget.addChild(result.ledger);
    return subAgentResult(name, result);
  }

  /**
   * The sub-agent's MCP tools, listed as a session lists its own (a child turn is offered what its
   * parent found, in its history); a listing that failed leaves its servers' tools unavailable.
   */
  private async discover(config: SessionConfig): Promise<McpToolSet | undefined> {
    const servers = config.mcp?.servers ?? [];
    if (!servers.length) return undefined;
    try {
      const { unchanged: _u, ...found } = await this.models.activity(() => discoverActivity(servers)({ sessionId: this.input.sessionId, ...mcpScopeOf(config), servers, ...(patched(TOOLS_BY_REF) ? { byRef: true as const } : {}) }));
      return found;
    } catch (err) {
      if (isCancellation(err)) throw err;
      const error = `tool discovery failed: ${rootCauseMessage(err)}`;
      return { servers: servers.map((s) => ({ server: s.name, status: 'failed', error, tools: 0 })), tools: [] };
    }
  }

  /** A child's wait began or ended: this turn shows the first child still waiting, and tells its own parent. */
  private async childStatus(s: TurnStatusSignal): Promise<void> {
    this.events.add('message');
    if (s.pending) this.waiting.set(s.turnId, { ...s.pending, agent: s.pending.agent ?? { turnId: s.turnId, path: this.childPath(s.turnId) } });
    else this.waiting.delete(s.turnId);
    await this.show();
  }

  /** A child ended: what it waited for is no longer waited for (a child cancelled while it waited said nothing). */
  private forget(turnId: string): void {
    if (this.waiting.delete(turnId)) void this.show();
  }

  /**
   * Shows the first child still waiting and tells this turn's parent. Not cancellable, and never
   * failing the turn: a turn being cancelled still tells its session it waits no more.
   */
  private show(): Promise<void> {
    const [first] = this.waiting.values();
    this.state.pending = first;
    this.state.status = !first ? 'running' : first.kind === 'question' ? 'waiting_for_user' : first.kind === 'budget' ? 'waiting_for_budget' : 'waiting_for_approval';
    const status = { turnId: this.input.turnId, status: this.state.status, ...(first ? { pending: first } : {}) };
    return CancellationScope.nonCancellable(() => notifyParent(status)).catch(() => undefined);
  }

  /** The path of a child of this turn: this turn's, and the sub-agent its call named. */
  private childPath(turnId: string): string[] {
    return [...pathOf(this.input), this.children.get(turnId) ?? 'sub-agent'];
  }
}
