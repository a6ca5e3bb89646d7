/** Typed failures of the long-term memory store. */

/** The memory database cannot be reached (down, refused, wrong address, auth); the turn goes on. */
export class MemoryUnavailableError extends Error {
  override readonly name = 'MemoryUnavailableError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

// Network errors Node raises when the server is absent or goes away mid-query.
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE']);

// SQLSTATE classes that mean "no usable server": connection exceptions (08), shutdown or
// startup in progress (57P01-57P03), auth failures (28), missing database (3D000).
function isUnavailableSqlState(code: string): boolean {
  return code.startsWith('08') || /^57P0[1-3]$/.test(code) || code.startsWith('28') || code === '3D000';
}

/** True when the error means the database is unreachable rather than a query bug. */
export function isUnavailable(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  // Node 20 reports a refused dual-stack connect (::1 and 127.0.0.1) as an AggregateError.
  if (err instanceof AggregateError && err.errors.some(isUnavailable)) return true;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || isUnavailableSqlState(code))) return true;
  const message = String((err as { message?: unknown }).message ?? '');
  // pg's own wording when the socket closes or the pool's connect timeout fires.
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(message);
}

/** One-line description of an unavailability error (AggregateError messages are empty). */
function describe(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) return describe(err.errors[0]);
  const e = err as { message?: unknown; code?: unknown };
  const text = typeof e?.message === 'string' && e.message ? e.message : typeof e?.code === 'string' ? e.code : String(err);
  return text.split('\n')[0]!.trim();
}

/** Rethrows unreachability as MemoryUnavailableError; other errors pass through unchanged. */
export function asMemoryError(err: unknown): unknown {
  if (err instanceof MemoryUnavailableError) return err;
  if (isUnavailable(err)) return new MemoryUnavailableError(`memory database unavailable: ${describe(err)}`, { cause: err });
  return err;
}
