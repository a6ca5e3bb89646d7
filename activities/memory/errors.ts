/** Typed failures of the long-term memory store. */

/** How every MemoryUnavailableError message starts, exactly once (the model and the logs see it). */
export const UNAVAILABLE_PREFIX = 'memory database unavailable: ';

/** The memory database cannot be reached (down, refused, frozen, wrong address, auth, folder in use); the turn goes on. */
export class MemoryUnavailableError extends Error {
  override readonly name = 'MemoryUnavailableError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

// Network errors Node raises when the server is absent or goes away mid-query.
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE']);

// SQLSTATE classes that mean "no usable server": connection exceptions (08), shutdown or
// startup in progress (57P01-57P03), auth failures (28), missing database (3D000), and a
// statement the server cancelled (57014: statement_timeout; the server is stuck or overloaded).
function isUnavailableSqlState(code: string): boolean {
  return code.startsWith('08') || /^57P0[1-3]$/.test(code) || code === '57014' || code.startsWith('28') || code === '3D000';
}

// pg's wording when its client-side query_timeout fires: the server or the network is frozen.
const QUERY_TIMEOUT = /Query read timeout/;
// pg and pg-pool's wordings when connectionTimeoutMillis fires (which one depends on the phase).
const CONNECT_TIMEOUT = /timeout exceeded when trying to connect|Connection terminated due to connection timeout/i;

/** True when a query gave up waiting on the server: the connection is in an unknown state and must be discarded. */
function isTimeout(err: unknown): boolean {
  return err instanceof Error && QUERY_TIMEOUT.test(err.message);
}

/** True when the error means the database is unreachable rather than a query bug. */
export function isUnavailable(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  // Node 20 reports a refused dual-stack connect (::1 and 127.0.0.1) as an AggregateError.
  if (err instanceof AggregateError && err.errors.some(isUnavailable)) return true;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || isUnavailableSqlState(code))) return true;
  const message = String((err as { message?: unknown }).message ?? '');
  // pg's own wording when the socket closes, the pool's connect timeout or the query timeout fires.
  return QUERY_TIMEOUT.test(message) || CONNECT_TIMEOUT.test(message) || /Connection terminated|Client has encountered a connection error/i.test(message);
}

/** One-line description of an unavailability error (AggregateError messages are empty). */
function describe(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) return describe(err.errors[0]);
  const e = err as { message?: unknown; code?: unknown };
  if (isTimeout(err)) return 'no answer from the database in time (query timeout)';
  if (err instanceof Error && CONNECT_TIMEOUT.test(err.message)) return 'no connection to the database in time (connect timeout)';
  const text = typeof e?.message === 'string' && e.message ? e.message : typeof e?.code === 'string' ? e.code : String(err);
  return text.split('\n')[0]!.trim();
}

/** Rethrows unreachability as MemoryUnavailableError; other errors pass through unchanged. */
export function asMemoryError(err: unknown): unknown {
  if (err instanceof MemoryUnavailableError) return err;
  if (isUnavailable(err)) return new MemoryUnavailableError(`${UNAVAILABLE_PREFIX}${describe(err)}`, { cause: err });
  return err;
}

/** Any failure to reach memory as one line starting with the prefix once (a MemoryUnavailableError already has it). */
export function unavailableMessage(err: unknown): string {
  const text = err instanceof MemoryUnavailableError ? err.message.split('\n')[0]!.trim() : describe(err);
  return text.startsWith(UNAVAILABLE_PREFIX) ? text : `${UNAVAILABLE_PREFIX}${text}`;
}
