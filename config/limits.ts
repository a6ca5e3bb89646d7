/**
 * The `limits` of harness.config.json (and of an agent, in the file or in code): the shape people
 * write, in seconds, and the Limits a session is fixed with, in milliseconds, defaults filled in.
 */
import { z } from 'zod';
import { DEFAULT_LIMITS, type Limits } from '../deterministic/session-config';
import type { Budget } from '../deterministic/budget';

const positiveInt = z.number().int().positive();

/** Each limit as written (all optional); `budget` is beside them (budgetSchema). */
export const limitFields = {
  maxSteps: positiveInt.max(1000),
  errorLimit: positiveInt,
  repeatLimit: positiveInt.min(2),
  askUserTimeoutSec: z.number().positive(),
  approvalTimeoutSec: z.number().positive(),
  continueAsNewAfterEvents: positiveInt.min(10),
  turnEventBudget: positiveInt.min(100).max(10_000),
  modelTimeoutSec: z.number().positive(),
  modelHeartbeatSec: z.number().positive(),
  modelMaxAttempts: positiveInt.max(20),
  /** How long rate limits (429) and outages (5xx, no connection) are retried from a call's first attempt (default 60; 0: modelMaxAttempts only). */
  modelRetryWindowSec: z.number().min(0).max(3600),
  /** How long a model call may run in the turn's workflow task before it becomes an activity of its own (default 3; 0: always an activity). */
  modelLocalSec: z.number().min(0).max(10),
  /** Most tokens one model reply may have (default 4096): a babbling model cannot hold a turn for minutes. */
  maxOutputTokens: positiveInt.max(1_000_000),
  /** How long a sandbox call waits for its host's worker before the session moves to another host (default 60). */
  hostTimeoutSec: z.number().min(5).max(3600),
  /** With structured output: how many final answers that do not match it go back to the model before the turn fails (default 2). */
  outputRetries: z.number().int().min(0).max(10),
  /** Longest a `wait` call may sleep, in seconds (default 86400, a day; at most 30 days). */
  maxWaitSec: z.number().positive().max(30 * 24 * 3600),
  /** How deep sub-agents may nest below the session's agent (default 2). */
  maxAgentDepth: z.number().int().min(0).max(10),
  /** How many sub-agent calls one turn may make (default 8). */
  maxSubAgentCalls: z.number().int().min(0).max(1000),
  /** How many background sub-agents a session may have running at once (default 4). */
  maxBackgroundAgents: z.number().int().min(0).max(100),
};

/** An agent's `limits`: every limit but the budget (an agent gives that as `budget`). */
export const limitsSchema = z.object(limitFields).partial().strict();

/** The limits as written: seconds, every field optional (harness.config.json's `limits`, an agent's `limits`). */
export type LimitsConfig = z.input<typeof limitsSchema>;

/** The limits written, in a session's units (ms), with the defaults for the rest. */
export function limitsOf(l: LimitsConfig & { budget?: Budget }): Limits {
  const sec = (v: number | undefined, fallback: number) => (v === undefined ? fallback : Math.round(v * 1000));
  return {
    maxSteps: l.maxSteps ?? DEFAULT_LIMITS.maxSteps,
    errorLimit: l.errorLimit ?? DEFAULT_LIMITS.errorLimit,
    repeatLimit: l.repeatLimit ?? DEFAULT_LIMITS.repeatLimit,
    askUserTimeoutMs: sec(l.askUserTimeoutSec, DEFAULT_LIMITS.askUserTimeoutMs),
    approvalTimeoutMs: sec(l.approvalTimeoutSec, DEFAULT_LIMITS.approvalTimeoutMs),
    continueAsNewAfterEvents: l.continueAsNewAfterEvents ?? DEFAULT_LIMITS.continueAsNewAfterEvents,
    turnEventBudget: l.turnEventBudget ?? DEFAULT_LIMITS.turnEventBudget,
    modelTimeoutMs: sec(l.modelTimeoutSec, DEFAULT_LIMITS.modelTimeoutMs),
    modelHeartbeatMs: sec(l.modelHeartbeatSec, DEFAULT_LIMITS.modelHeartbeatMs),
    modelMaxAttempts: l.modelMaxAttempts ?? DEFAULT_LIMITS.modelMaxAttempts,
    modelRetryWindowMs: sec(l.modelRetryWindowSec, DEFAULT_LIMITS.modelRetryWindowMs!),
    modelLocalMs: sec(l.modelLocalSec, DEFAULT_LIMITS.modelLocalMs!),
    maxOutputTokens: l.maxOutputTokens ?? DEFAULT_LIMITS.maxOutputTokens,
    ...(l.budget ? { budget: l.budget } : {}),
    ...(l.hostTimeoutSec !== undefined ? { hostTimeoutMs: sec(l.hostTimeoutSec, 0) } : {}),
    ...(l.outputRetries !== undefined ? { outputRetries: l.outputRetries } : {}),
    ...(l.maxWaitSec !== undefined ? { maxWaitMs: sec(l.maxWaitSec, 0) } : {}),
    ...(l.maxAgentDepth !== undefined ? { maxAgentDepth: l.maxAgentDepth } : {}),
    ...(l.maxSubAgentCalls !== undefined ? { maxSubAgentCalls: l.maxSubAgentCalls } : {}),
    ...(l.maxBackgroundAgents !== undefined ? { maxBackgroundAgents: l.maxBackgroundAgents } : {}),
  };
}
