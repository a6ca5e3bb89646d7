/**
 * Session-level contracts: the resolved configuration a session starts with (a workflow
 * input, so replay sees the same settings) and what turns take and give back.
 * Secrets never appear here: the config names a provider and model, keys stay with the worker.
 */
import type { ChatMessage, Risk, Usage } from './types';
import type { Policy, Rule } from './policy/schema';
import type { CompressionConfig } from './context/plan';
import type { BlobArg, ConversationRef, PendingMessage } from './conversation';
import type { EvalApprovals } from './eval';
import type { McpServerSpec, McpServerStatus, McpToolSet } from './mcp';
import type { WorkspaceSnapshot } from './snapshot';
import type { CustomToolSet } from './custom-tools';
import type { ToolModeDecision, ToolModeSetting } from './tool-mode';
import type { Budget, BudgetBreach, BudgetRaises, Spend } from './budget';
import type { Pricing } from './pricing';
import type { LedgerTally } from './ledger';

/** How the model is reached. `scripted` carries its script so any worker can serve it. */
export type ModelSpec =
  | { provider: 'openai'; model: string; baseUrl?: string; toolMode?: ToolModeSetting }
  | { provider: 'scripted'; model: string; script: unknown; toolMode?: ToolModeSetting };

/** The model spec as sent with each call: the scripted script is registered once per turn instead. */
export type ModelRef = { provider: 'openai' | 'scripted'; model: string; baseUrl?: string };

/** Limits that bound a turn and a session. */
export interface Limits {
  /** Steps (model calls) per turn before `max_steps`. */
  maxSteps: number;
  /** Consecutive failed steps before `error_limit`. */
  errorLimit: number;
  /** Identical consecutive tool calls before the model is warned; one more stops the turn. */
  repeatLimit: number;
  /** How long ask_user waits for an answer before `USER_TIMEOUT`. */
  askUserTimeoutMs: number;
  /** How long a call waits for a human approval before `APPROVAL_TIMEOUT`. */
  approvalTimeoutMs: number;
  /** Continue-as-new once the session history has this many events (Temporal may suggest sooner). */
  continueAsNewAfterEvents: number;
  /** A turn continues as new, between steps, once its run's history has about this many events, as the turn counts them (Temporal warns at 10,240). */
  turnEventBudget?: number;
  /** Start-to-close timeout of one model call attempt. */
  modelTimeoutMs: number;
  /** A model call that sends no heartbeat for this long is retried elsewhere (worker crash); the call heartbeats every third of it. */
  modelHeartbeatMs: number;
  /** Attempts per model call (408/409/429/5xx/network are retried). */
  modelMaxAttempts: number;
  /** Most tokens one model reply may have (sent as the provider expects); absent in sessions from before it: the default. */
  maxOutputTokens?: number;
  /** What a turn and the session may spend (tokens or USD); a model call that would pass it waits for a person. */
  budget?: Budget;
}

/** Defaults used when neither flag, environment nor config file says otherwise. */
export const DEFAULT_LIMITS: Limits = {
  maxSteps: 20,
  errorLimit: 3,
  repeatLimit: 3,
  askUserTimeoutMs: 24 * 60 * 60 * 1000,
  approvalTimeoutMs: 60 * 60 * 1000,
  continueAsNewAfterEvents: 2000,
  turnEventBudget: 4000,
  modelTimeoutMs: 120_000,
  modelHeartbeatMs: 5_000,
  modelMaxAttempts: 5,
  maxOutputTokens: 4096,
};

/** Everything a session is fixed with when it starts. */
export interface SessionConfig {
  model: ModelSpec;
  systemPrompt: string;
  limits: Limits;
  /** The permission policy (absent in sessions started before policies existed). */
  policy?: Policy;
  /** Long-term memory: the namespace this session reads and writes, and how many recent entries preload. */
  memory?: { namespace: string; preload: number };
  /** Extra skill folders (beside the project's `skills/`). */
  skills?: { folders: string[] };
  /** Context compression settings (absent: no compression). */
  compression?: CompressionConfig;
  /** Network reach of http_request: hosts (`host` or `host:port`) whose private or loopback addresses it may use. */
  network?: { allowPrivateHosts: string[] };
  /** MCP servers whose tools the session offers (discovered at session start). */
  mcp?: { servers: McpServerSpec[] };
  /** Custom tools the session cannot do without: a first turn whose worker lacks one fails saying so. */
  tools?: { required: string[] };
  /** The price of the session's model, fixed when it starts (absent in sessions from before prices). */
  pricing?: Pricing;
  /**
   * Carry the whole conversation in every model call's input, as turns did before the message
   * store. For the history benchmark's comparison only: not settable from a config file.
   */
  inlineHistory?: boolean;
}

/** What one session carries across turns and across continue-as-new. */
export interface SessionCarry {
  /** The conversation as messages: sessions from before the message store (empty after their next turn). */
  messages: ChatMessage[];
  /** The conversation by reference to the message store. */
  conversation?: ConversationRef;
  memory: Record<string, string>;
  turnCount: number;
  modelCalls: number;
  usage: Usage;
  /** Allow rules added by `approve --always`; they hold for this session only. */
  sessionRules?: Rule[];
  /** The MCP tools discovered for this session (once; again when a server says its list changed). */
  mcpTools?: McpToolSet;
  /** The custom tools, as the first turn's worker listed them (fixed for the session). */
  customTools?: CustomToolSet;
  /** The last turn's outcome and what it added to the totals: a retried turn's result replaces it. */
  lastTurn?: LastTurn;
  /** How the session's turns offer the tools, as its first turn decided. */
  toolMode?: ToolModeDecision;
  /** What the session's turns spent (model calls, compressions, wasted attempts), priced. */
  spend?: Spend;
  /** What people added to the session's budget (`approve --budget`). */
  budgetRaised?: BudgetRaises['session'];
}

/** What the session remembers of its last turn (carried across continue-as-new for `harness retry`). */
export interface LastTurn {
  turn: number;
  terminated_by: TerminatedBy;
  modelCalls: number;
  usage: Usage;
  spend?: Spend;
}

/** Input of sessionWorkflow. `carry` is set when the session continued as new. */
export interface SessionInput {
  sessionId: string;
  config: SessionConfig;
  carry?: SessionCarry;
  /** `harness fork`: the session starts by going on with a recorded turn from one of its steps. */
  fork?: ForkSpec;
}

/** One file write a recorded turn made, replayed into a fork's workspace (content as history holds it). */
export interface ForkWrite {
  step: number;
  path: string;
  content: unknown;
  append?: boolean;
}

/**
 * Where a fork starts: the recorded turn's conversation before the model call of `from.step`
 * (read from the source session's store), the turn's state then, and the edits asked for.
 */
export interface ForkSpec {
  from: { sessionId: string; turnId: string; step: number };
  conversation: { head: string | null; pending: PendingMessage[] };
  /** Replaces the text of the conversation's last user message. */
  editMessage?: string;
  /** What the recorded turn wrote with write_file before the step, in order. */
  writes: ForkWrite[];
  userMessage: string;
  memory: Record<string, string>;
  sessionRules: Rule[];
  /** The recorded call index of the step: the fork's model calls are numbered on from it. */
  modelCallBase: number;
  /** Values of the source session's store the fork's config names (a scripted model's script). */
  copyBlobs?: string[];
  /**
   * `harness rerun`: the recorded turn's conversation at its end. Its replies after the fork point
   * become the fork's model (a script), and the fork's turn is compared with it once done.
   */
  replay?: { conversation: { head: string | null; pending: PendingMessage[] }; decisions: RecordedDecision[] };
  /**
   * Seeds the fork's workspace: the recorded turn's starting snapshot (in the store of session
   * `from`), a copy of a session's workspace as it is now (turns recorded before snapshots), or
   * of a folder on the worker's host.
   */
  seed?: { session: string } | { dir: string } | { snapshot: WorkspaceSnapshot; from: string };
  /** The fork's step limit (the recorded turn's own, or `--max-steps`); steps are numbered on from the record. Absent: the config's. */
  maxSteps?: number;
  mcpTools?: McpToolSet;
}

/** What preparing a fork made: its conversation in the fork's own store, and its workspace. */
export interface ForkPrepared {
  conversation: ConversationRef;
  /** Files written into the workspace, with the step that wrote them last. */
  restored: { path: string; step: number }[];
  /** What could not be done (a file that would not write, no user message to edit). */
  problems: string[];
  /** `harness rerun`: the recorded replies as the fork's script (in the fork's store). */
  script?: BlobArg;
  /** Files the seed put in the workspace. */
  seeded?: number;
}

/** Where a rerun first went another way than its record, compared message by message. */
export interface RerunReport {
  /** Steps whose tool results were compared. */
  compared: number;
  diverged: boolean;
  first?: { step: number; callId?: string; tool?: string; what: string; recorded: string; now: string };
  /** Why the comparison stopped early (a compression rewrote the recorded conversation). */
  note?: string;
}

/** Why a turn stopped. */
export type TerminatedBy =
  | 'final_answer'
  | 'finish'
  | 'max_steps'
  | 'error_limit'
  | 'repeated_action'
  | 'cancelled'
  | 'failed'
  | 'budget_exceeded';

/** Input of turnWorkflow: the conversation so far plus the new user message. */
export interface TurnInput {
  sessionId: string;
  turn: number;
  turnId: string;
  config: SessionConfig;
  /** The conversation as messages (sessions from before the message store; empty otherwise). */
  history: ChatMessage[];
  /** The conversation by reference to the message store. */
  conversation?: ConversationRef;
  /** Set when the turn continued as new: where the previous run stopped. */
  resume?: TurnResume;
  memory: Record<string, string>;
  userMessage: string;
  maxSteps?: number;
  /** Model calls the session made before this turn; makes every call's index unique and stable. */
  modelCallBase: number;
  /** Session-scoped allow rules from earlier `--always` approvals. */
  sessionRules?: Rule[];
  /** The session's MCP tools (what discovery found; servers that failed are listed with why). */
  mcpTools?: McpToolSet;
  /** The session's custom tools (absent: this turn lists them, in prepareTurn). */
  customTools?: CustomToolSet;
  /** `harness rerun`: human decisions of the recorded turn, applied to the same calls without asking again. */
  recordedDecisions?: RecordedDecision[];
  /** An eval trial: the case's approval decisions and ask_user answers (nobody is waited for). */
  evalHumans?: { approvals: EvalApprovals; answers: string[] };
  /** With a session budget: what the session spent before this turn and what people added to its budget. */
  sessionBudget?: { spent: Spend; raised?: BudgetRaises['session'] };
  /** How the session's earlier turns offered the tools (native or text): this turn keeps it. */
  toolMode?: ToolModeDecision;
}

/** A human decision of a recorded turn: the call by its digest (tool and arguments). */
export interface RecordedDecision {
  digest: string;
  approved: boolean;
  reason?: string;
  /** The recorded turn that decided it. */
  from: string;
}

/** How the policy judged a call (recorded with it). */
export interface PolicyRecord {
  decision: 'allow' | 'deny' | 'ask';
  rule?: string;
  reason: string;
}

/**
 * A human's answer to an approval request (recorded with the call). `updateId` names the
 * update in history, whose event carries when the server accepted it and the identity of the
 * client that sent it: who and when never come from the request body.
 */
export interface ApprovalRecord {
  approved: boolean;
  /** Only in turns recorded before decisions were bound server-side: what the client claimed. */
  by?: string;
  at?: string;
  updateId?: string;
  reason?: string;
  always?: boolean;
  /** The command words an `--always` granted instead of exactly the command shown. */
  pattern?: string;
  timedOut?: boolean;
  /** Decided by the record a rerun reproduces (the turn id), not by a human now. */
  fromRecord?: string;
}

/** One tool call as the turn saw it: what was asked, how it was judged, what came back. */
export interface ToolCallRecord {
  step: number;
  callId: string;
  name: string;
  args: unknown;
  ok: boolean;
  error_type?: string;
  policy?: PolicyRecord;
  approval?: ApprovalRecord;
}

/**
 * Where a long turn stopped to continue as new (between steps, nothing pending): everything
 * the loop needs to go on as if it had not stopped.
 */
export interface TurnResume {
  /** The next step to run. */
  step: number;
  usage: Usage;
  modelCalls: number;
  /** Model call attempts beyond the first so far. */
  retriedAttempts?: number;
  failedSteps: number;
  lastContent: string;
  repeat: { last: string; count: number; warned: boolean };
  memory: Record<string, string>;
  sessionRules: Rule[];
  compressions: CompressionRecord[];
  toolCalls: ToolCallRecord[];
  storedToolCalls: string[];
  conversation: ConversationRef;
  /** What prepareTurn gave the first run (the turn keeps its tools, skills and memories); a fork prepares anew. */
  prepared?: { skillsIndex?: string; memories?: string[]; skillRules?: Rule[]; customTools?: CustomToolSet; toolMode?: ToolModeDecision };
  /** The MCP tools as the previous run last knew them. */
  mcpTools?: McpToolSet;
  /** What the turn spent so far and the raises people gave its budgets. */
  spend?: Spend;
  budgetRaised?: BudgetRaises;
  /** The turn's tally so far. */
  ledger?: RecordedLedger;
}

/** Output of turnWorkflow. */
export interface TurnResult {
  sessionId: string;
  turnId: string;
  turn: number;
  answer: string;
  terminated_by: TerminatedBy;
  steps: number;
  usage: Usage;
  /** Messages this turn added (user message first): turns from before the message store. */
  messages?: ChatMessage[];
  /** The conversation after this turn, by reference to the message store. */
  conversation?: ConversationRef;
  memory: Record<string, string>;
  modelCalls: number;
  /** The calls of the turn (with the message store: the latest ones; earlier ones in `storedToolCalls`). */
  toolCalls: ToolCallRecord[];
  /** Hashes of stored chunks of earlier call records (each a JSON array, oldest first): a long turn's records stay out of its result. */
  storedToolCalls?: string[];
  /** Session rules after this turn (earlier ones plus any `--always` approvals). */
  sessionRules?: Rule[];
  /** Set when the turn compressed the conversation: `messages` is then the whole new history. */
  replacesHistory?: boolean;
  /** What each compression did (tokens before/after, messages summarised, results compacted). */
  compressions?: CompressionRecord[];
  /** Set when the turn discovered the MCP tools again (a server said its list changed). */
  mcpTools?: McpToolSet;
  /** Set when this turn listed the session's custom tools (its first): the session keeps them. */
  customTools?: CustomToolSet;
  /** How this turn offered the tools (native or text) and why: the session keeps it for later turns. */
  toolMode?: ToolModeDecision;
  error?: string;
  /** Model call attempts beyond the first (retries), over every run of the turn. */
  retriedAttempts?: number;
  /** What the turn spent (model calls, compressions, wasted attempts), priced with the session's pricing. */
  spend?: Spend;
  /** What people added to the session's budget during this turn (the session keeps it). */
  sessionBudgetRaised?: BudgetRaises['session'];
  /** The turn's ledger as it counted it (common/ledger.ts): read from the close event instead of every event. */
  ledger?: RecordedLedger;
}

/** A turn's own tally of its model calls, priced; `exact` unless a call ended in a way only history tells (its attempts unknown). */
export type RecordedLedger = LedgerTally & { exact: boolean; pricing?: Pricing };

/** One compression as the turn result records it. */
export interface CompressionRecord {
  step: number;
  before_tokens: number;
  after_tokens: number;
  summarized_messages: number;
  compacted_tool_results: number;
}

/** Session status as the `state` query reports it. */
export type SessionStatus = 'idle' | 'running' | 'waiting_for_user' | 'waiting_for_approval' | 'waiting_for_budget' | 'ended';

/** A tool call waiting for a human decision. */
export interface PendingApproval {
  callId: string;
  tool: string;
  args: unknown;
  /** Digest of tool and arguments: a decision must name it, so it applies only to what was shown. */
  digest?: string;
  risk: Risk;
  rule?: string;
  reason: string;
}

/** Something a turn waits on a human for: a question, or the calls of one step to approve. */
export type Pending =
  | { kind: 'question'; callId: string; question: string }
  | { kind: 'approvals'; calls: PendingApproval[] }
  | ({ kind: 'budget'; step?: number } & BudgetBreach);

/** Answer of the `state` query. */
export interface SessionState {
  sessionId: string;
  status: SessionStatus;
  turnCount: number;
  currentTurnId?: string;
  pending?: Pending;
  usage: Usage;
  memory: Record<string, string>;
  messageCount: number;
  model: string;
  lastTurn?: { turnId: string; terminated_by: TerminatedBy; answer: string; steps: number };
  /** A forked session: the turn and step it comes from, the files put back in its workspace, what could not be. */
  fork?: { from: string; step: number; restored: string[]; problems: string[]; seeded?: number };
  /** A rerun: how its first turn compared with the record (once it finished). */
  rerun?: RerunReport;
  /** The session's MCP servers as discovery found them. */
  mcp?: McpServerStatus[];
  /** How the model is offered the tools (native or text) and why, once a turn decided it. */
  toolMode?: ToolModeDecision;
  /** What the session spent so far (sessions from before prices: absent). */
  spend?: Spend;
}

/** Answer of a turn's own `turnState` query. */
export interface TurnState {
  turnId: string;
  status: 'running' | 'waiting_for_user' | 'waiting_for_approval' | 'waiting_for_budget' | 'done';
  step: number;
  pending?: Pending;
}

/** Zero usage. */
export const NO_USAGE: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

/** Sums two usages. */
/** a − b, never below zero (a turn's usage taken back out of the session's totals). */
export function subtractUsage(a: Usage, b: Usage): Usage {
  return {
    prompt_tokens: Math.max(0, a.prompt_tokens - b.prompt_tokens),
    completion_tokens: Math.max(0, a.completion_tokens - b.completion_tokens),
    total_tokens: Math.max(0, a.total_tokens - b.total_tokens),
  };
}

export function addUsage(a: Usage, b: Usage): Usage {
  const cached = (a.cached_tokens ?? 0) + (b.cached_tokens ?? 0);
  return {
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
    // Only when a provider reported cached tokens, so usages recorded before stay as they were.
    ...(cached ? { cached_tokens: cached } : {}),
  };
}
