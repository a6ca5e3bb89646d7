/**
 * http_request as a turn's activity runs it. The turn's cancellation aborts the request. A GET or
 * HEAD is sent again when its worker is lost mid-request (HTTP calls them safe: they change
 * nothing the server would count twice). POST, PUT, PATCH and DELETE are sent at most once: the
 * call is claimed first (at-most-once.ts), and an attempt after a lost one says the request may
 * or may not have taken effect instead of sending it again. A redirect followed within the call
 * is part of it.
 */
import { Context } from '@temporalio/activity';
import type { ToolResult } from '../../deterministic/types';
import { atMostOnce, type OnceCall } from './at-most-once';
import { httpRequest, requestMethod, type HttpOptions, type HttpRequestArgs } from './http';

/** Methods a retry may send again. */
const REPEATABLE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD']);

/** Runs one http_request call; `call` names it for its claim (absent for calls outside a turn: no claim). */
export function httpCall(args: HttpRequestArgs, opts: HttpOptions, call: OnceCall | undefined): Promise<ToolResult> {
  const signal = opts.signal ?? activityCancellation();
  const run = () => httpRequest(args, { ...opts, ...(signal ? { signal } : {}) });
  const method = requestMethod(args);
  if (!call || REPEATABLE_METHODS.has(method)) return run();
  return atMostOnce(call, 'http_request', run, `http_request ${method} ${args.url}`);
}

/** The running activity's cancellation; none when called outside an activity (tests, direct use of the executor). */
function activityCancellation(): AbortSignal | undefined {
  try {
    return Context.current().cancellationSignal;
  } catch {
    return undefined;
  }
}
