/**
 * Tokens a model call paid for without a reply the turn could use: an attempt whose provider
 * reported usage along with its error, or one whose reply came but could not be stored (the
 * retry pays again). The call's attempts carry the sum in their heartbeat details; the attempt
 * that succeeds returns it as `wasted`, and a call that fails for good carries it in its
 * failure's details, so the ledger reads it from history either way.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Usage } from '../deterministic/types';

/** The details a failed model call carries: the attempt that failed last, and what its attempts wasted. */
interface WasteDetails {
  attempt: number;
  wasted?: Usage;
  /** A local attempt's failure: the run it failed in (see EarlierAttempt.permanent). */
  runId?: string;
}

const count = (n: unknown): number => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0);

/** Usage a provider reported with its error (an error object that carries `usage`), if any. */
export function reportedUsage(err: unknown): Usage | undefined {
  const body = (err as { error?: { usage?: Record<string, unknown> } } | null)?.error;
  const u = body && typeof body === 'object' ? body.usage : undefined;
  if (!u || typeof u !== 'object') return undefined;
  const prompt = count(u.prompt_tokens);
  const completion = count(u.completion_tokens);
  const total = count(u.total_tokens) || prompt + completion;
  return total ? { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total } : undefined;
}

/** The waste so far plus one attempt's usage (undefined stays undefined when nothing was wasted). */
export function addWaste(so: Usage | undefined, more: Usage | undefined): Usage | undefined {
  if (!more?.total_tokens) return so;
  const cached = (so?.cached_tokens ?? 0) + (more.cached_tokens ?? 0);
  return {
    prompt_tokens: (so?.prompt_tokens ?? 0) + more.prompt_tokens,
    completion_tokens: (so?.completion_tokens ?? 0) + more.completion_tokens,
    total_tokens: (so?.total_tokens ?? 0) + more.total_tokens,
    ...(cached ? { cached_tokens: cached } : {}),
  };
}

/**
 * The failure with its attempt and waste in its details (type, message and retryability kept), so
 * a call that fails for good still tells how many attempts it took and what they used; other
 * errors pass unchanged.
 */
export function withWaste(err: unknown, wasted: Usage | undefined, attempt: number, runId?: string): unknown {
  if (!(err instanceof ApplicationFailure)) return err;
  const details: WasteDetails = { attempt, ...(wasted ? { wasted } : {}), ...(runId ? { runId } : {}) };
  return ApplicationFailure.create({
    message: err.message,
    ...(err.type ? { type: err.type } : {}),
    nonRetryable: err.nonRetryable === true,
    // Ours first (the ledger reads the first), any the failure had after them.
    details: [details, ...(err.details ?? [])],
    ...(err.cause ? { cause: err.cause } : {}),
    ...(err.nextRetryDelay ? { nextRetryDelay: err.nextRetryDelay } : {}),
    ...(err.category ? { category: err.category } : {}),
  });
}
