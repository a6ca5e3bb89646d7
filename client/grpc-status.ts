/**
 * What the CLI's connection last heard from Temporal that the SDK retried silently. The SDK
 * retries UNAVAILABLE and RESOURCE_EXHAUSTED inside a call for up to ~40 s, so a call with a
 * deadline fails with only DEADLINE_EXCEEDED; a wait that can say "Temporal is overloaded"
 * instead of "did not answer" tells the person what it is really waiting for.
 */
import type { Interceptor } from '@grpc/grpc-js';
import { defaultGrpcRetryOptions, makeGrpcRetryInterceptor, type Client, type ConnectionLike } from '@temporalio/client';
import { grpcJs } from './grpc-js';

const { InterceptingCall } = grpcJs;

// gRPC status codes (grpc.status).
const OK = 0;
const RESOURCE_EXHAUSTED = 8;
const UNAVAILABLE = 14;

/** A status the connection received, and when. */
export interface SeenStatus {
  code: number;
  details: string;
  at: number;
}

interface Observed {
  /** The last UNAVAILABLE or RESOURCE_EXHAUSTED an attempt ended with. */
  transient?: SeenStatus;
  /** When the latest attempt that succeeded began. */
  okAt: number;
}

// The codes the SDK retries without telling anyone (DEADLINE_EXCEEDED and the rest reach the caller).
const SILENTLY_RETRIED = new Set<number>([UNAVAILABLE, RESOURCE_EXHAUSTED]);

const observedBy = new WeakMap<ConnectionLike, Observed>();

/**
 * Interceptors for a client connection: the SDK's default retry, and inside it (so it sees
 * every attempt) a recorder of the statuses attempts end with. `bind` ties the record to the
 * connection once it exists.
 */
export function observingInterceptors(): { interceptors: Interceptor[]; bind: (connection: ConnectionLike) => void } {
  const observed: Observed = { okAt: 0 };
  const recorder: Interceptor = (options, nextCall) =>
    new InterceptingCall(nextCall(options), {
      start(metadata, _listener, next) {
        const began = Date.now();
        // Only onReceiveStatus: grpc-js fills in the rest and chains this to the caller's listener.
        next(metadata, {
          onReceiveStatus(status, nextStatus) {
            // When the call began, not when it ended: a long poll that went out before the
            // trouble and came back fine says nothing about the server now.
            if (status.code === OK) observed.okAt = Math.max(observed.okAt, began);
            else if (SILENTLY_RETRIED.has(status.code)) observed.transient = { code: status.code, details: status.details, at: Date.now() };
            nextStatus(status);
          },
        });
      },
    });
  return {
    interceptors: [makeGrpcRetryInterceptor(noRetryOverLimit(defaultGrpcRetryOptions())), recorder],
    bind: (connection) => void observedBy.set(connection, observed),
  };
}

/**
 * The SDK's retries, less a message over the client's receive limit: grpc-js reports it as
 * RESOURCE_EXHAUSTED, which the SDK retries for ~40 s, but the same message is as large again
 * (history/read-history.ts asks for a smaller page instead).
 */
function noRetryOverLimit(options: ReturnType<typeof defaultGrpcRetryOptions>): ReturnType<typeof defaultGrpcRetryOptions> {
  return {
    ...options,
    retryableDecider: (attempt, status) => !(status.code === RESOURCE_EXHAUSTED && /larger than max/.test(status.details)) && options.retryableDecider(attempt, status),
  };
}

/**
 * The silently retried status the client's connection received within the last `withinMs`,
 * when no call begun since has succeeded: the likely reason a call just ran out of time.
 */
export function recentTransient(client: Client, withinMs: number): SeenStatus | undefined {
  const observed = observedBy.get(client.connection);
  const t = observed?.transient;
  if (!observed || !t || t.at < observed.okAt || Date.now() - t.at > withinMs) return undefined;
  return t;
}
