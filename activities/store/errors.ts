/**
 * Failures of the message store, for the store itself and for the activities that use it. A
 * database that is down, frozen or locked is StoreUnavailableError with one line saying why
 * (classified by the memory code, which shares the database); anything else is a bug and
 * passes through. Activities turn StoreUnavailableError into a retryable STORE_UNAVAILABLE
 * failure: unlike memory, a turn cannot go on without its conversation, so it waits for the
 * store to come back (the activity's retry policy bounds how long).
 */
import { ApplicationFailure } from '@temporalio/common';
import { MemoryUnavailableError, UNAVAILABLE_PREFIX, isUnavailable, unavailableMessage } from '../memory/errors';
import { StoreUnavailableError } from './message-store';

/** How every unreachable-store message starts. */
const STORE_UNAVAILABLE_PREFIX = 'message store unavailable: ';

/** The failure type activities report while the store cannot be used. */
export const STORE_UNAVAILABLE = 'STORE_UNAVAILABLE';

/** Rethrows unreachability (including a memory-side refusal to open the shared database) as StoreUnavailableError; other errors pass through. */
export function asStoreError(err: unknown): unknown {
  if (err instanceof StoreUnavailableError) return err;
  if (!(err instanceof MemoryUnavailableError) && !isUnavailable(err)) return err;
  // The memory code words it for memory; only the reason is shared.
  const why = unavailableMessage(err).slice(UNAVAILABLE_PREFIX.length);
  return new StoreUnavailableError(`${STORE_UNAVAILABLE_PREFIX}${why}`, { cause: err });
}

/** StoreUnavailableError as a retryable STORE_UNAVAILABLE ApplicationFailure with its one-line message; other errors unchanged. */
export function storeFailure(err: unknown): unknown {
  if (!(err instanceof StoreUnavailableError)) return err;
  return ApplicationFailure.create({ message: err.message.split('\n')[0]!.trim(), type: STORE_UNAVAILABLE, nonRetryable: false });
}

/** Runs an activity body, reporting an unavailable store as a retryable STORE_UNAVAILABLE failure. */
export async function withStore<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw storeFailure(err);
  }
}
