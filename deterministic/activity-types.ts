/** Inputs and outputs of the activities, shared by the workflow (as types) and the worker. */
import type { Rule } from './policy/schema';
import type { ModelRef } from './session-config';
import type { PolicyRecord } from './call-records';
import type { ChatMessage, ToolCall, ToolResult, ToolSpec, Usage } from './types';
import type { ConversationRef, SystemRef } from './conversation';
import type { McpServerRef, McpServerStatus, McpToolSet } from './mcp';
import type { WorkspaceSnapshot } from './snapshot';
import type { CustomToolSet } from './custom-tools';
import type { ToolMode, ToolModeDecision } from './tool-mode';
import type { HostRef } from './host';
import type { ModelRetry } from './model-retry';
import type { SessionMetadata } from './metadata';

/** One model call. `callIndex` is unique and stable per session, so a retried call is recognisable. */
export interface ModelCallInput {
  sessionId: string;
  turnId: string;
  step: number;
  callIndex: number;
  model: ModelRef;
  /** The whole conversation, system message first: turns recorded before the message store. */
  messages?: ChatMessage[];
  /** The conversation by reference (the message store); the activity appends the reply to it. */
  conversation?: Pick<ConversationRef, 'head' | 'pending'>;
  /** The system message by reference (its text only when it changed). */
  system?: SystemRef;
  /** The step's memory by reference (its text only when it changed): a system message after the conversation, never stored in it. */
  notes?: SystemRef;
  /** With a conversation: the prefix of the harness's call ids for this step (`t<turn>-s<step>`). */
  callIdPrefix?: string;
  /** Names of the tools offered; their schemas are in the turn's prepareTurn result. */
  tools: string[];
  /** The session's MCP tool list in the message store (their schemas are read from there). */
  mcpTools?: string;
  /** The session's custom tool list in the message store (likewise). */
  customTools?: string;
  /**
   * A session with structured output (turns since `finish-output-schema`): the output's JSON
   * schema, offered as finish's parameters (deterministic/finish-output.ts); by its hash in the
   * message store, its text when the run has not sent it yet.
   */
  outputSchema?: SystemRef;
  purpose?: 'turn' | 'compress';
  /** How the tools are offered (the turn's decision); absent with `decideToolMode`, or in turns recorded before tool modes (native). */
  toolMode?: ToolModeDecision;
  /** `auto` with nothing decided yet: this call decides (see activities/model/auto.ts) and its reply says how. */
  decideToolMode?: boolean;
  /** The reply cap (limits.maxOutputTokens). */
  maxOutputTokens?: number;
  /**
   * Run as a local activity (turns since `local-model-call`): a reply that takes longer than this,
   * or whose text starts to stream, is handed on to the callModel activity (`adopt`) instead of
   * holding the workflow task.
   */
  handOffAfterMs?: number;
  /** Nobody watches the call live (an eval trial's): its text is not streamed, so a quick one stays in the workflow task. */
  noStream?: boolean;
  /** The key of a call the local activity handed on: the worker that holds it goes on waiting for it (another one would call again). */
  adopt?: string;
  /** A local attempt that failed before this activity: its failure, and what it wasted (the activity's attempts count on from it). */
  earlier?: EarlierAttempt;
  /** How the call is retried (deterministic/model-retry.ts); absent from workflows before it, whose retry policy alone bounds the call. */
  retry?: ModelRetry;
}

/** What a failed local attempt of a model call leaves to the activity that tries again. */
export interface EarlierAttempt {
  attempts: number;
  failure: string;
  wasted?: Usage;
  /**
   * The failure was permanent (not retryable), in the run `runId`: the activity records it
   * rather than send the request again, unless it runs in another run (the turn was reset by
   * `harness retry`, which is meant to send it again).
   */
  permanent?: { type: string; runId: string };
  /** The wait the endpoint asked for (Retry-After) or the backoff: the activity waits it before its first request. */
  retryAfterMs?: number;
  /** Of those attempts, how many timed out: they count toward the timed-out attempts a call may have. */
  timeouts?: number;
}

/**
 * What callModel returns when run as a local activity: the reply with the request it answers
 * (history keeps no local activity's input, so the trace, the ledger and fork read it here), or
 * the key of a call still waiting for its reply, handed on to the callModel activity, and the
 * task queue of the worker that holds it (workers/handoff-queue.ts; absent from workers before
 * it, whose activity went to the shared queue).
 */
export type LocalModelOutcome = (ModelReply & { request: ModelCallInput }) | { handoff: string; queue?: string };

/** A reply that could not be used and what the model was told (text mode, a cut or empty reply). */
export interface ModelCorrection {
  problem: string;
  /** The start of the reply as written. */
  reply: string;
  /** What the reply that needed correcting used (part of the call's usage; the ledger counts it apart). */
  usage?: Usage;
}

/** What the model answered, plus the attempt that got it (retries are visible in history). */
export interface ModelReply {
  /** With a conversation and tool calls, long content is cut here (the store keeps it whole). */
  content: string | null;
  /**
   * With a conversation: harness ids already given, and large payload arguments (a tool's
   * `blobArgs`) replaced by BlobArg references; the store holds the calls as the model made them.
   */
  toolCalls: ToolCall[];
  usage: Usage;
  /** Tokens earlier attempts of this call paid for without a usable reply, when the provider reported them. */
  wasted?: Usage;
  model: string;
  attempt: number;
  latencyMs: number;
  /** With a conversation: the conversation with this reply appended. */
  conversation?: ConversationRef;
  /** Calls of the reply past the number the activity keeps (MAX_CALLS_PER_REPLY): neither stored nor run. */
  droppedCalls?: number;
  /** How this call offered the tools, the decision it made (`decided`, auto's first call) and the corrections it needed. */
  protocol?: { mode: ToolMode; constrained?: boolean; decided?: ToolModeDecision; corrections?: ModelCorrection[] };
  /** The reply was cut at limits.maxOutputTokens and still was after the corrections allowed (its content says so). */
  truncated?: boolean;
  /** The provider sent no usage: `usage` is the tokenizer's estimate. */
  usageEstimated?: boolean;
  /** A reasoning model's thinking (bounded): in history for the trace, never sent back to the provider. */
  reasoning?: string;
}

/** Input of prepareTurn: makes the session's model reachable and lists its tools. */
export interface PrepareTurnInput {
  sessionId: string;
  model: { provider: 'openai' | 'scripted'; model: string; baseUrl?: string; script?: unknown; scriptKey?: string };
  memory?: { namespace: string; preload: number };
  skillFolders?: string[];
  /** The turn has no recorded custom tools (its session's first): list the worker's. */
  listCustomTools?: boolean;
  /** With listCustomTools: the session's agent, whose tools are the only ones listed (absent: the worker's own tools, not its agents'). */
  agent?: string;
}

/** Output of prepareTurn: the tools offered and what the system message starts the turn with. */
export interface PrepareTurnResult {
  tools: ToolSpec[];
  /** The workspace as the turn found it, in the session's store (turns recorded before snapshots have none). */
  workspace?: WorkspaceSnapshot;
  /** Layer 1 of the skills: names and descriptions. */
  skillsIndex?: string;
  /** SKILL.md files that were skipped, with why. */
  skillProblems?: string[];
  /** The most recent long-term memories of the namespace. */
  memories?: string[];
  /** Why memories could not be loaded (database down); the turn goes on without them. */
  memoryProblem?: string;
  /** Allow rules for the session's own skill scripts (`python3 /skills/<name>/<script>` …). */
  skillRules?: Rule[];
  /** With listCustomTools: the worker's custom tools, which the session then keeps. */
  customTools?: CustomToolSet;
  /** The host of the worker that prepared the turn, when it serves one (the session lives there). */
  host?: HostRef;
}

/** What an eval's trials without fixtures share of prepareTurn (workflows/eval/trial-prepare.ts); without customTools, each trial prepares itself. */
export type EvalTrialsPrepared = Pick<PrepareTurnResult, 'customTools' | 'skillsIndex' | 'skillRules'>;

/** Input of claimHost: a session whose host was lost, and the workspace to restore on the next. */
export interface ClaimHostInput {
  sessionId: string;
  lost: HostRef;
  snapshot?: WorkspaceSnapshot;
}

/** Output of claimHost: the worker's host (absent when it serves none) and what the restore did. */
export interface ClaimHostResult {
  host?: HostRef;
  restored?: { files: number; problems: string[] };
}

/** One tool execution outside the workflow. */
export interface ExecuteToolInput {
  sessionId: string;
  turnId: string;
  step: number;
  callId: string;
  name: string;
  args: unknown;
  /** How the policy judged the call (kept in history with the execution). */
  policy?: PolicyRecord;
  /** Long-term memory namespace of the session. */
  namespace?: string;
  /** The tool's own timeout; the activity's start-to-close is derived from it. */
  timeoutMs?: number;
  /** Turns using the message store: resolve BlobArg arguments, and store a large result, returning a reference. */
  store?: boolean;
  /** Hosts whose private or loopback addresses http_request may reach (session config). */
  allowPrivateHosts?: string[];
  /** An MCP tool: the server to call, the tool's name there (`name` is the qualified one), how long a server question waits. */
  mcp?: { server: McpServerRef; tool: string; askUserTimeoutMs?: number; agent?: string; tenant?: string };
  /** A custom tool (defineTool): whether the session recorded it idempotent (otherwise a claim makes it run once). */
  custom?: { idempotent: boolean };
  /** A custom tool's call: the session's metadata, which the tool reads as ctx.metadata (absent: none was set). */
  metadata?: SessionMetadata;
  /** A custom tool's call in an agent's session: the agent, whose tools are the only ones the worker runs for it. */
  agent?: string;
}

/** Input of discoverMcpTools: the session's servers (or only some of them, keeping the others' tools). */
export interface DiscoverMcpInput {
  sessionId: string;
  /** The session's agent and tenant: a shareable server's process is theirs (deterministic/mcp-scope.ts). */
  agent?: string;
  tenant?: string;
  servers: McpServerRef[];
  /** Re-discover only these servers; the rest are taken from `previous` or `previousRef`. */
  only?: string[];
  /** The set so far, inline (turns recorded before `previousRef`). */
  previous?: McpToolSet;
  /** The set so far by reference: its servers' statuses and its stored list (none: no tools). */
  previousRef?: { servers: McpServerStatus[]; ref?: string };
  /** Return the set by reference (its list stored, not inline): the session carries it so. */
  byRef?: true;
}

/** Input of loadMcpTools: the stored list of a session's MCP tool set. */
export interface LoadMcpToolsInput {
  sessionId: string;
  ref: string;
}

/**
 * What discoverMcpTools returns. `unchanged` (asked with `previousRef`): the servers listed the
 * tools the session has, which are not repeated here (`tools` is empty, `ref` the same list).
 */
export type DiscoveredMcpTools = McpToolSet & { unchanged?: true };

/**
 * What executeTool returns: the result, and when it was large and stored, the stored tool message
 * (its `result` then left out). `mcpListChanged`: the server said its tool list changed.
 */
export type ToolOutcome = ToolResult & { stored?: { ref: string; tokens: number }; mcpListChanged?: boolean };
