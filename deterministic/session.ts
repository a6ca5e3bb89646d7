/**
 * Session and turn contracts: what sessionWorkflow starts with and carries across turns and
 * continue-as-new, and what a turn takes, gives back and resumes from.
 *
 * The other session contracts live in their own files: the configuration (session-config.ts),
 * tool call records (call-records.ts), fork and rerun (fork.ts), query answers (session-state.ts)
 * and usage arithmetic (usage.ts). They are re-exported here because some eighty files, workflow
 * code among them, import them from this path.
 */
import type { ChatMessage, Usage } from './types';
import type { Rule } from './policy/schema';
import type { ConversationRef } from './conversation';
import type { EvalApprovals } from './eval';
import type { McpToolSet } from './mcp';
import type { CustomToolSet } from './custom-tools';
import type { ToolModeDecision } from './tool-mode';
import type { BudgetRaises, Spend } from './budget';
import type { Pricing } from './pricing';
import type { LedgerTally } from './ledger';
import type { BackgroundFrom } from './background';
import type { SessionConfig } from './session-config';
import type { ToolCallRecord } from './call-records';
import type { ForkSpec, RecordedDecision, RecordedEffects } from './fork';
import type { HostMove, HostRef } from './host';
import type { WorkspaceSnapshot } from './snapshot';
import type { Pending, SessionState } from './session-state';
import type { SubAgentPlace } from './sub-agents';


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
  /** The sandbox host the session lives on (deterministic/host.ts). */
  host?: HostRef;
  /** What `status` shows that the run before continue-as-new knew: the last answer (clipped), a fork's origin, a rerun's comparison. */
  view?: Pick<SessionState, 'lastTurn' | 'fork' | 'rerun'>;
  /** Background sub-agents (deterministic/background.ts): those running, with what each waits for, and the last ends taken (so none is taken twice). */
  background?: { running: Array<{ turnId: string; path: string[]; pending?: Pending; held?: Spend }>; taken: string[] };
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
  /** `harness rerun`: calls that leave the sandbox are answered with these recorded results, never made. */
  recordedEffects?: RecordedEffects;
  /** An eval trial: the case's approval decisions and ask_user answers (nobody is waited for). */
  evalHumans?: { approvals: EvalApprovals; answers: string[] };
  /**
   * A first turn its caller prepared (an eval's trial without fixtures, skills folders or memory:
   * workflows/eval/trial-prepare.ts): it runs no prepareTurn, offers these custom tools and skills,
   * and each model call carries its scripted model's script (no stored copy to read back).
   */
  prepared?: { customTools: CustomToolSet; skillsIndex?: string; skillRules?: Rule[] };
  /**
   * The turn patch set of the code that started the turn (an eval's trial: workflows/turn/patches.ts).
   * The turn takes that set from its input, which history holds, instead of recording the set's
   * marker: no marker and no search-attribute update a turn. Its starter runs the same code.
   */
  patchSet?: string;
  /** With a session budget: what the session spent before this turn and what people added to its budget. */
  sessionBudget?: { spent: Spend; raised?: BudgetRaises['session'] };
  /** How the session's earlier turns offered the tools (native or text): this turn keeps it. */
  toolMode?: ToolModeDecision;
  /** The session's sandbox host (deterministic/host.ts): its sandbox calls go to that host's queue. */
  host?: HostRef;
  /** A sub-agent's turn, started by a call of another turn (deterministic/sub-agents.ts): where it stands. */
  subAgent?: SubAgentPlace;
  /** Background sub-agents of the session running when the turn began, by turn id (deterministic/background.ts): they count toward its limit. */
  backgroundRunning?: string[];
  /** The turn's message is a background sub-agent's end: who sent it (the trace's sent_by). */
  from?: BackgroundFrom;
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
  /**
   * What its background children counted against this turn's budgets when it continued: held for
   * those still running, spent for those that ended. The next run cannot hear a child's end, so it
   * counts this until the turn ends.
   */
  backgroundCounted?: Spend;
  /** The session's sandbox host as the previous run left it, and the workspace the turn began with (to restore on another host). */
  host?: HostRef;
  workspace?: WorkspaceSnapshot;
  /** With structured output: the final answers so far that did not match it. */
  invalidOutputs?: number;
}

/** Output of turnWorkflow; `O` is the type of `output` when the caller knows the session's output schema. */
export interface TurnResult<O = unknown> {
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
  /** With structured output (the session's `output`): the final answer as the validated object. */
  output?: O;
  error?: string;
  /** What kind of failure `error` is, when it has one: OUTPUT_INVALID (no answer matched the output schema). */
  error_type?: string;
  /** Model call attempts beyond the first (retries), over every run of the turn. */
  retriedAttempts?: number;
  /** What the turn spent (model calls, compressions, wasted attempts), priced with the session's pricing. */
  spend?: Spend;
  /** What people added to the session's budget during this turn (the session keeps it). */
  sessionBudgetRaised?: BudgetRaises['session'];
  /** The turn's ledger as it counted it (deterministic/ledger.ts): read from the close event instead of every event. */
  ledger?: RecordedLedger;
  /** The session's sandbox host after this turn (the session keeps it), and the moves off lost hosts. */
  host?: HostRef;
  hostMoves?: HostMove[];
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
