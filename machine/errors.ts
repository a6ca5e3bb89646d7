/**
 * Errors meant for a person at a terminal: one line saying what is wrong plus a hint,
 * never a stack trace. Anything else reaching the CLI's top level is a bug and shows its stack.
 */

/** Base of all user-facing errors. `exitCode` follows the CLI contract (1 error, 2 usage, 3 waiting for a human). */
export class UserError extends Error {
  override name = 'UserError';
  constructor(
    message: string,
    readonly hint?: string,
    readonly exitCode: 1 | 2 | 3 = 1,
  ) {
    super(message);
  }
}

/** A bad flag, argument or config value. */
export class UsageError extends UserError {
  override name = 'UsageError';
  constructor(message: string, hint?: string) {
    super(message, hint, 2);
  }
}
