/**
 * What the step loop (turn-loop.ts) is given: the operations it needs from the outside world
 * (activities in the turn workflow, plain calls in the step benchmark) and a turn's options.
 * Types only.
 */
import type { ModelCallInput, ModelReply, ToolOutcome } from '../deterministic/activity-types';
import type { Policy, Rule } from '../deterministic/policy';
import type { CompressContextInput, CompressContextResult } from '../deterministic/context/types';
import type { ApprovalRecord, PendingApproval, PolicyRecord, RecordedEffects, TurnResume } from '../deterministic/session';
import type { ToolRegistry } from '../deterministic/tools';
import type { McpToolSet } from '../deterministic/mcp';
import type { CustomToolSet } from '../deterministic/custom-tools';
import type { TurnContext } from './turn/system-message';
import type { Spent } from './turn/budget';

/** One admitted call the loop hands to ops.executeTool (every tool that does not run in the workflow). */
export interface ToolExecution {
  step: number;
  callId: string;
  name: string;
  args: unknown;
  timeoutMs: number;
  local: boolean;
  /** The tool's risk is read_only: running it changes nothing (workflows/model-call.ts orders effects' markers). */
  readOnly?: boolean;
  policy?: PolicyRecord;
  /** An MCP tool: its server, the name the server knows it by, and whether the server calls it idempotent. */
  mcp?: { server: string; tool: string; idempotent: boolean };
  /** A custom tool (defineTool), and whether it may run twice. */
  custom?: { idempotent: boolean };
}

/** What the loop needs from the outside world. */
export interface TurnOps {
  callModel(input: ModelCallInput): Promise<ModelReply>;
  executeTool(call: ToolExecution): Promise<ToolOutcome>;
  /** Waits for a human answer; resolves `undefined` on timeout. */
  askUser(callId: string, question: string): Promise<string | undefined>;
  /** Waits for decisions on a step's asked calls; a missing entry counts as timed out. */
  awaitApprovals(calls: PendingApproval[]): Promise<Map<string, ApprovalRecord>>;
  /** Compresses the context (an activity); absent means never compress. */
  compressContext?(input: CompressContextInput): Promise<CompressContextResult>;
  /** Called before each model call so the host can expose progress. */
  onStep?(step: number): void;
  /** Whether an error means the turn was cancelled (then it ends as `cancelled`, keeping its work). */
  isCancellation?(err: unknown): boolean;
  /** Asked between steps (with the message store): true stops the run here to continue as new. */
  shouldContinueAsNew?(): boolean;
  /** Stores a value in the message store (with it: chunks of call records); returns its hash. */
  storeValue?(value: unknown): Promise<string>;
  /** Lists the tools of the MCP servers again (a server said its list changed). */
  rediscoverMcp?(previous: McpToolSet, servers: string[]): Promise<McpToolSet>;
  /** Before each model call, with the context's estimated tokens: why the turn stops (its budget ran out, nobody raised it), or undefined. */
  admitModelCall?(step: number, contextTokens: number): Promise<string | undefined>;
  /** What the turn spent so far, for its result and the run it continues in. */
  spent?(): Spent;
}

/** Options of a turn run. */
export interface TurnOptions {
  registry?: ToolRegistry;
  /** The permission policy; absent means every valid call is allowed (sessions from before policies). */
  policy?: Policy;
  /** Skills index and long-term memories for the system message. */
  context?: TurnContext;
  /** Allow rules that hold for this turn only (derived from the session's skills). */
  turnRules?: readonly Rule[];
  /**
   * Give each call the harness's own id (unique per turn, step and call) instead of the
   * provider's, which may be missing or repeat across steps. Off only for turns recorded before.
   */
  harnessCallIds?: boolean;
  /** Estimate tokens by script (CJK at one token a character) rather than 4 characters a token. */
  scriptAwareEstimate?: boolean;
  /** Hold the conversation by reference to the message store (every turn but those recorded before). */
  messageStore?: boolean;
  /** The session's MCP tools (already part of `registry`), and how to build the registry again when they change. */
  mcp?: { tools: McpToolSet; registry(tools: McpToolSet): ToolRegistry; rules(tools: McpToolSet): Rule[] };
  /** Bound what model text may cost the workflow (argument depth, echoed text, fingerprints); off only for turns recorded before. */
  boundedInput?: boolean;
  /** The session's custom tools (already part of `registry`); `listed`: this turn listed them, and its result hands them to the session. */
  custom?: { tools: CustomToolSet; listed: boolean };
  /** Why the turn cannot run at all (tools the session needs are missing): it ends `failed` before any model call. */
  refuse?: string;
  /** A rerun: calls that leave the sandbox are answered with these recorded results (workflows/recorded-effects.ts). */
  recorded?: RecordedEffects;
}

/** A run that stopped between steps to continue as new, with where it stopped. */
export interface TurnContinuation {
  continueAsNew: TurnResume;
}
