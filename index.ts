/**
 * The public entry point of the harness as a library (`import { … } from 'durable-agent-harness'`):
 * tools in TypeScript (defineTool), agents (defineAgent), a worker that runs them
 * (createHarnessWorker), and a client that drives sessions (connectHarness; the `harness` CLI is
 * built on it). Only what is exported here is public; everything else may change between releases.
 */
export { defineTool, type ToolDefinitionInput } from './api/define-tool';
export { ToolError, type HarnessTool, type ToolContext, type ToolLogger } from './deterministic/custom-tools';
export { ToolDefinitionError } from './deterministic/tools';
export { createHarnessWorker, type HarnessWorker, type HarnessWorkerOptions } from './api/worker';
export { defineAgent, AgentDefinitionError, type AgentDefinitionInput } from './api/define-agent';
export type { HarnessAgent } from './config/agents';
export type { LimitsConfig } from './config/limits';
export type { McpServerDeclaration } from './config/mcp';
export type { PolicyInput } from './deterministic/policy/schema';
export type { Budget, BudgetLimit } from './deterministic/budget';
export type { WorkerTuning } from './workers/tuning';
export { connectHarness, HarnessClient, type ConnectOptions, type Decided, type RunOutcome, type SentMessage, type TraceOptions, type TypedOutcome } from './api/client';
export type { SendOptions } from './api/send-options';
export type { HarnessSchedules, ScheduleInfo, ScheduleOptions, FiringTimes, OverlapName } from './api/schedules';
export { UserError, UsageError } from './machine/errors';
export { harnessHome } from './machine/paths';
export type { DecisionRequest } from './client/session-client';
export type { TurnOutcome, WaitOptions } from './client/turn-wait';
export type { SessionView, SessionViewStatus } from './client/session-status';
export type { Cancelled, CancelOptions } from './client/cancel';
export type { Trace } from './history/trace';
export type { Span, SpanStatus, SpanType } from './history/trace/types';
export type {
  HarnessEvent,
  EventPosition,
  TurnStartedEvent,
  StepEvent,
  ModelTextEvent,
  ModelTextDeltaEvent,
  ToolCallEvent,
  ApprovalNeededEvent,
  ApprovalDecidedEvent,
  ToolResultEvent,
  QuestionAskedEvent,
  QuestionAnsweredEvent,
  BudgetWaitEvent,
  BudgetDecidedEvent,
  FinalEvent,
} from './client/watch/event-types';
export type { EventOptions } from './client/watch/follow-events';
export type { TerminatedBy, TurnResult } from './deterministic/session';
export type { Pending, PendingApproval, SessionState, TurnState } from './deterministic/session-state';
export type { ToolCallRecord } from './deterministic/call-records';
export type { Risk, ToolResult, Usage } from './deterministic/types';
export type { ErrorType, ToolErrorType } from './deterministic/errors';
export { OUTPUT_INVALID } from './deterministic/output';
export type { JsonValue, SessionMetadata } from './deterministic/metadata';
export type { PendingApprovalItem, PendingBudgetItem, PendingItem, PendingOptions, PendingQuestionItem } from './client/pending';
