/**
 * One call of a tool whose effect must not happen twice: a custom tool that is not idempotent,
 * an http_request that may change something (POST, PUT, PATCH, DELETE). Temporal runs an activity
 * again when its worker is lost, and the harness cannot know how far the lost attempt got. So the
 * call is claimed before it runs (store/call-claims.ts: in the shared database, so an attempt on
 * another host finds the claim too): a later attempt returns the result the first one recorded,
 * or, when the first never finished, says the call may or may not have taken effect instead of
 * running it again.
 */
import os from 'node:os';
import { toolError } from '../../deterministic/errors';
import type { ToolResult } from '../../deterministic/types';
import type { CallClaims } from '../store/call-claims';
import { withStore } from '../store/errors';

/** The call a claim names: where claims are kept, its session, and its key `<turnId>/<callId>`. */
export interface OnceCall {
  claims: () => Promise<CallClaims>;
  sessionId: string;
  key: string;
}

/**
 * Runs `run` unless an earlier attempt of the call claimed it, and records its result for a
 * later attempt. `tool` names the tool in the result a later attempt gets when the first never
 * finished; `what` the call itself (default: the tool's name). A `run` that throws (the turn was
 * cancelled) leaves the claim unfinished: the call may have had its effect. A store that cannot
 * be reached fails the attempt as a retryable STORE_UNAVAILABLE before the call runs.
 */
export async function atMostOnce(call: OnceCall, tool: string, run: () => Promise<ToolResult>, what: string = tool): Promise<ToolResult> {
  const claims = await withStore(call.claims);
  const claim = await withStore(() => claims.claim(call.sessionId, call.key, `${os.hostname()} pid ${process.pid}`));
  if (claim.kind === 'done') return claim.result;
  const result = claim.kind === 'unfinished' ? unfinished(tool, what, claim.by) : await run();
  // Of two attempts running at once (a worker thought lost that was only slow), the first result recorded stands.
  return withStore(() => claims.settle(call.sessionId, call.key, result));
}

/** The result of a call whose earlier attempt claimed it and never finished. */
function unfinished(tool: string, what: string, by: string): ToolResult {
  return toolError(
    'EXECUTION_ERROR',
    `${what} was started before (by ${by}) and its worker was lost before it finished; it was not run again, so it may or may not have taken effect`,
    { suggestion: `check whether it took effect before calling ${tool} again` },
  );
}
