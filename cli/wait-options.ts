/**
 * The `--wait-timeout` option of commands that wait. Apart from cli/wait.ts, which drives turns
 * and loads the Temporal client: commands register this option at start, `--help` included.
 */
import { InvalidArgumentError, Option } from 'commander';

/**
 * How long a command waits for a turn by default. Long enough for a turn of many model calls
 * and for an outage of the server or worker to pass; the turn goes on if we stop waiting.
 */
export const DEFAULT_WAIT_TIMEOUT_SEC = 3600;

/** A positive number of seconds (at most 30 days). */
export function parseWaitTimeout(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > 30 * 24 * 3600) throw new InvalidArgumentError('expected a number of seconds greater than 0');
  return n;
}

/** The `--wait-timeout <seconds>` option of commands that wait for a turn. */
export function waitTimeoutOption(description = 'stop waiting for the turn after this long (the session keeps going)'): Option {
  return new Option('--wait-timeout <seconds>', description)
    .argParser(parseWaitTimeout)
    .default(DEFAULT_WAIT_TIMEOUT_SEC);
}
