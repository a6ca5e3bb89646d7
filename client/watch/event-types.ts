/**
 * The events a turn tells as it runs (HarnessClient.events): one type per kind, each with its
 * position in the turn's history so a reader can go on after a reconnect.
 */
import type { BudgetScope, BudgetUnit } from '../../deterministic/budget';
import type { TerminatedBy } from '../../deterministic/session';
import type { Risk, Usage } from '../../deterministic/types';

/**
 * Where an event came from: `offset` is the position in the turn's history of the event that
 * made it known (the history event id; a turn that continued as new counts on across its runs:
 * the second run's event n is at the first run's length + n), `seq` its place among the events
 * that one history event gave (a model reply gives its text and each tool call it asks for).
 */
export interface EventPosition {
  offset: number;
  seq: number;
}

/** What every event carries: the turn, where it came from, and when (ISO 8601, the history event's time). */
export interface EventBase extends EventPosition {
  turnId: string;
  at: string;
}

/** The turn began: its number, the user's message, the model. */
export interface TurnStartedEvent extends EventBase {
  type: 'turn_started';
  sessionId: string;
  turn: number;
  message: string | null;
  model?: string;
}

/** The turn began a step (a model call, with the compression and tool calls that belong to it). */
export interface StepEvent extends EventBase {
  type: 'step';
  step: number;
}

/**
 * A model call answered with text: the reply's whole text, once the call completed. This is the
 * authoritative text (model_text_delta events before it are a preview of it). A reply that also
 * asks for tool calls may be cut short here (the message store keeps it whole).
 */
export interface ModelTextEvent extends EventBase {
  type: 'model_text';
  step: number;
  text: string;
}

/**
 * A piece of a model call's reply as it streams, while the call runs: the worker stores the text
 * in the database it shares with the client (batched, about every 100 ms), and the client reads
 * it from there, so any client that reaches that database gets it (a client with no database
 * access gets none). Best effort: history keeps only the finished reply, so the `model_text` of
 * the call (after its deltas) is the text to keep. For one call and `attempt`, the deltas' texts
 * concatenated are the start of the reply, usually all of it (a stored stream stops at 1 MiB, or
 * at a database failure). A request sent again (a retry) starts its text over with a higher
 * `attempt`: drop what the earlier attempt's deltas gave. A client that joins late, or follows a
 * finished turn, gets the deltas still stored (workers delete them after a few hours) of each
 * call it sees running in the history; a call that answered before it ran long enough to be seen
 * running has none. Position: `offset` is the history event at which the call was first seen
 * running, `seq` counts on after that event's own events, one per stored piece, so `from` a
 * delta resumes with the next piece; `at` is when the piece was stored.
 */
export interface ModelTextDeltaEvent extends EventBase {
  type: 'model_text_delta';
  step: number;
  /** The model call of the step (with `step`, it names the call). */
  callIndex: number;
  attempt: number;
  text: string;
}

/** The model asked for a tool call (what happens to it comes later: approval, result). */
export interface ToolCallEvent extends EventBase {
  type: 'tool_call';
  step: number;
  callId: string;
  tool: string;
  args: unknown;
  /** `local`, `skill`, `mcp:<server>`, `custom`. */
  source?: string;
}

/** A call waits for a person: approve or deny it by `callId` (`harness.approve(sessionId, { callIds: [callId] })`). */
export interface ApprovalNeededEvent extends EventBase {
  type: 'approval_needed';
  callId: string;
  tool: string;
  args?: unknown;
  risk?: Risk;
  reason?: string;
  rule?: string;
  digest?: string;
  /** A sub-agent's call (its child turn, where the decision goes through the session, and the path of agents). */
  agent?: SubAgentRef;
}

/** The sub-agent turn an event is of, and the agents from the session's down to it (`lead › researcher`). */
export interface SubAgentRef {
  turnId: string;
  path: string[];
}

/** A call that waited for approval was decided (or nobody did in time, or the turn was cancelled first). */
export interface ApprovalDecidedEvent extends EventBase {
  type: 'approval_decided';
  callId: string;
  tool: string;
  approved: boolean;
  by?: string;
  reason?: string;
  always?: boolean;
  timedOut?: boolean;
  cancelled?: boolean;
}

/** What a tool call came back with (ran, or was refused before running). */
export interface ToolResultEvent extends EventBase {
  type: 'tool_result';
  step: number;
  callId: string;
  tool: string;
  ok: boolean;
  result?: unknown;
  /** The error in one line (`ERROR_TYPE: message`) when `ok` is false. */
  error?: string;
  errorType?: string;
}

/** The turn waits for an answer: `harness.answer(sessionId, text, { questionId })`. */
export interface QuestionAskedEvent extends EventBase {
  type: 'question_asked';
  questionId: string;
  /** The tool call that asks (ask_user's own, or the MCP call whose server asks). */
  callId: string;
  question: string;
  /** An MCP server's question: the server. */
  server?: string;
  /** A sub-agent's question: its child turn and the path of agents. */
  agent?: SubAgentRef;
}

/** A question was answered, or nobody answered in time. */
export interface QuestionAnsweredEvent extends EventBase {
  type: 'question_answered';
  questionId: string;
  callId: string;
  answer?: string;
  by?: string;
  timedOut?: boolean;
}

/** A model call waits because it would go past a budget: `harness.decideBudget(sessionId, …)`. */
export interface BudgetWaitEvent extends EventBase {
  type: 'budget_wait';
  step: number;
  scope: BudgetScope;
  unit: BudgetUnit;
  limit: number;
  spent: number;
  estimate: number;
}

/** A budget wait ended: raised, stopped, nobody decided in time, or it ended with the turn. */
export interface BudgetDecidedEvent extends EventBase {
  type: 'budget_decided';
  step: number;
  decision: 'raised' | 'stopped' | 'timed_out' | 'ended';
  by?: string;
  raisedBy?: number;
  reason?: string;
}

/** The turn sleeps in a `wait` call (no model call meanwhile) until `until`, or until someone wakes it: `harness.wake(sessionId, reason)`. */
export interface WaitStartedEvent extends EventBase {
  type: 'wait_started';
  callId: string;
  /** ISO 8601. */
  until: string;
  reason: string;
}

/** A wait ended: its time came (`woken` false), or someone woke it (who, as history records the client, and why). */
export interface WaitEndedEvent extends EventBase {
  type: 'wait_ended';
  callId: string;
  woken: boolean;
  by?: string;
  reason?: string;
}

/** A message sent while the turn ran (`harness send`): its model reads it at the next step; `interrupt` also cancelled the calls of the step running then. */
export interface SteeredEvent extends EventBase {
  type: 'steered';
  text: string;
  mode: 'queue' | 'interrupt';
}

/** The turn ended; nothing comes after this. */
export interface FinalEvent extends EventBase {
  type: 'final';
  status: 'completed' | 'failed' | 'cancelled' | 'terminated' | 'timed_out';
  terminatedBy?: TerminatedBy;
  answer?: string;
  error?: string;
  steps?: number;
  usage?: Usage;
  /** The validated answer object of an agent with structured output (`output`), as result() gives it. */
  output?: unknown;
}

/** Everything a turn tells as it runs, in order; `type` says which. */
export type HarnessEvent =
  | TurnStartedEvent
  | StepEvent
  | ModelTextEvent
  | ModelTextDeltaEvent
  | ToolCallEvent
  | ApprovalNeededEvent
  | ApprovalDecidedEvent
  | ToolResultEvent
  | QuestionAskedEvent
  | QuestionAnsweredEvent
  | BudgetWaitEvent
  | BudgetDecidedEvent
  | WaitStartedEvent
  | WaitEndedEvent
  | SteeredEvent
  | FinalEvent;
