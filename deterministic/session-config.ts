/**
 * The resolved configuration a session starts with: how the model is reached, the limits on its
 * turns, and the rest of the settings. It is part of the workflow input, so replay sees the same
 * settings. Secrets never appear here: the config names a provider and model, keys stay with the worker.
 */
import type { Policy } from './policy/schema';
import type { CompressionConfig } from './context/plan';
import type { McpServerRef } from './mcp';
import type { ToolModeSetting } from './tool-mode';
import type { Budget } from './budget';
import type { Pricing } from './pricing';
import type { SessionMetadata } from './metadata';
import type { OutputSpec } from './output';
import type { NotifyConfig } from './webhook';
import type { SubAgentOffer } from './sub-agents';

/** How the model is reached. `scripted` carries its script so any worker can serve it. */
export type ModelSpec =
  | { provider: 'openai'; model: string; baseUrl?: string; toolMode?: ToolModeSetting }
  | { provider: 'scripted'; model: string; script: unknown; toolMode?: ToolModeSetting; scriptKey?: string };

/**
 * The model spec as sent with each call: the scripted script is registered once per turn instead
 * (by prepareTurn; a turn prepared by its caller sends it with each call).
 * `scriptKey`: a sub-agent's turn plays its own script under this key, not its session's.
 */
export type ModelRef = {
  provider: 'openai' | 'scripted';
  model: string;
  baseUrl?: string;
  scriptKey?: string;
  /** A scripted turn that ran no prepareTurn (TurnInput.prepared): the script, which the worker registers at the call. */
  script?: unknown;
};

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
  /** Attempts per model call (408/409/429/5xx/network are retried); rate limits and outages get at least as many. */
  modelMaxAttempts: number;
  /**
   * Rate limits (429), server errors (5xx), 408 and an unreachable endpoint are retried until this
   * long after the call's first attempt (deterministic/model-retry.ts); 0: only modelMaxAttempts. Absent
   * in sessions from before it: the default.
   */
  modelRetryWindowMs?: number;
  /**
   * A model call first runs inside the turn's workflow task (a local activity) and is handed on to
   * an activity of its own once it takes this long; 0 runs every call as an activity. Absent in
   * sessions from before it: the default.
   */
  modelLocalMs?: number;
  /** Most tokens one model reply may have (sent as the provider expects); absent in sessions from before it: the default. */
  maxOutputTokens?: number;
  /** What a turn and the session may spend (tokens or USD); a model call that would pass it waits for a person. */
  budget?: Budget;
  /** How long a call waits for its sandbox host's worker before the session moves to another host (absent: deterministic/host.ts's default). */
  hostTimeoutMs?: number;
  /** With structured output: how many final answers that do not match it are sent back before the turn fails (absent: deterministic/output.ts's default). */
  outputRetries?: number;
  /** Longest a `wait` call may sleep (absent: deterministic/wait.ts's default, a day). */
  maxWaitMs?: number;
  /** How deep sub-agents may nest below the session's agent (absent: deterministic/sub-agents.ts's default, 2). */
  maxAgentDepth?: number;
  /** How many sub-agent calls one turn may make (absent: deterministic/sub-agents.ts's default, 8). */
  maxSubAgentCalls?: number;
  /** How many background sub-agents a session may have running at once (absent: deterministic/background.ts's default, 4). */
  maxBackgroundAgents?: number;
}

/** Defaults used when neither flag, environment nor config file says otherwise. */
export const DEFAULT_LIMITS: Limits = {
  maxSteps: 20,
  errorLimit: 3,
  repeatLimit: 3,
  askUserTimeoutMs: 24 * 60 * 60 * 1000,
  // As long as a question: a person asked to approve may answer as late as one asked to reply.
  approvalTimeoutMs: 24 * 60 * 60 * 1000,
  continueAsNewAfterEvents: 2000,
  turnEventBudget: 4000,
  modelTimeoutMs: 120_000,
  modelHeartbeatMs: 5_000,
  modelMaxAttempts: 5,
  modelRetryWindowMs: 60_000,
  modelLocalMs: 3_000,
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
  mcp?: { servers: McpServerRef[] };
  /** Custom tools the session cannot do without: a first turn whose worker lacks one fails saying so. */
  tools?: { required: string[] };
  /**
   * What the application set when it started the session (a user id, a tenant …, at most 16 KiB
   * of JSON): custom tools read it as `ctx.metadata`; it is never put into the model's messages.
   */
  metadata?: SessionMetadata;
  /** The price of the session's model, fixed when it starts (absent in sessions from before prices). */
  pricing?: Pricing;
  /**
   * Structured output: every turn's final answer must be a JSON object matching this schema
   * (deterministic/output.ts); the turn's result carries the validated object as `output`.
   */
  output?: OutputSpec;
  /**
   * A webhook told when a call waits for approval, a question for an answer, and when a turn ends
   * (deterministic/webhook.ts): its URL only, one the worker declared (createHarnessWorker's
   * `webhooks`, or the agent's `notify`); the secret that signs stays on the worker.
   */
  notify?: NotifyConfig;
  /**
   * Carry the whole conversation in every model call's input, as turns did before the message
   * store. For the history benchmark's comparison only: not settable from a config file.
   */
  inlineHistory?: boolean;
  /**
   * The agent the session runs as, by name (createHarnessWorker's `agents`, the worker config's
   * `agents`): its worker gives the model, instructions, policy, limits, MCP servers, skills and
   * tools (activities/agents.ts), once, when the session starts.
   */
  agent?: string;
  /**
   * Until the worker resolved the agent: which of the fields an agent decides this input set itself
   * (absent: every one of them). Each must narrow the agent's; the others are the agent's.
   */
  agentSet?: AgentField[];
  /** The worker filled in the agent's settings: what the session carries from then on (continue-as-new included). */
  agentResolved?: true;
  /**
   * The agent's sub-agents, offered as `agent__<name>` tools: set by the worker as it resolves the
   * agent (an input's own is dropped), and checked again by the worker at each call.
   */
  subAgents?: SubAgentOffer[];
}

/**
 * The fields of a session's config an agent decides: its model, system prompt (the agent's
 * instructions), policy (or only its mode), limits (budget included), MCP servers, skills folders
 * and required custom tools.
 */
export type AgentField = 'model' | 'systemPrompt' | 'policy' | 'policyMode' | 'limits' | 'mcp' | 'skills' | 'tools';
