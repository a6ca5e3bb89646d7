/** Parsers for CLI arguments: bad values are usage errors (exit 2) with the rule stated. */
import { InvalidArgumentError } from 'commander';
import { parseAnyTurnId as anyTurnIdParts, parseTurnId as turnIdParts } from '../deterministic/turn-id';

const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** A session id: letters, digits, `.`, `_`, `-`; it names a workflow and a workspace folder. */
export function parseSessionId(value: string): string {
  if (!SESSION_ID.test(value)) throw new InvalidArgumentError('use letters, digits, ".", "_" or "-" (at most 128, starting with a letter or digit)');
  return value;
}

/** A turn id: `<session>/turn-N`. */
export function parseTurnId(value: string): string {
  const t = turnIdParts(value, { strict: true });
  if (!t || !SESSION_ID.test(t.sessionId)) throw new InvalidArgumentError('expected a turn id: <session>/turn-N (see `harness status <session>`)');
  return value;
}

/** A session id, or a turn id `<session>/turn-N`. */
export function parseSessionOrTurnId(value: string): string {
  const t = turnIdParts(value, { strict: true });
  if (!SESSION_ID.test(t ? t.sessionId : value)) {
    throw new InvalidArgumentError('expected a session id (letters, digits, ".", "_", "-") or a turn id (<session>/turn-N)');
  }
  return value;
}

/** What a sub-agent's turn id looks like, for the messages that take one. */
const AGENT_TURN_FORM = "a sub-agent's turn (<session>/turn-N/agent-<call id>, named in its parent turn's `harness trace`)";

/** A turn id: a session's `<session>/turn-N`, or a sub-agent's `<session>/turn-N/agent-<call id>` (nested: more `/agent-…`). */
export function parseAnyTurnId(value: string): string {
  const t = anyTurnIdParts(value, { strict: true });
  if (!t || !SESSION_ID.test(t.sessionId)) throw new InvalidArgumentError(`expected a turn id: <session>/turn-N (see \`harness status <session>\`), or ${AGENT_TURN_FORM}`);
  return value;
}

/** A session id, or a turn id: a session's or a sub-agent's. */
export function parseSessionOrAnyTurnId(value: string): string {
  const t = anyTurnIdParts(value, { strict: true });
  if (!SESSION_ID.test(t ? t.sessionId : value)) {
    throw new InvalidArgumentError(`expected a session id (letters, digits, ".", "_", "-"), a turn id (<session>/turn-N) or ${AGENT_TURN_FORM}`);
  }
  return value;
}

/** A positive whole number of steps. */
export function parseMaxSteps(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new InvalidArgumentError('expected a whole number from 1 to 1000');
  return n;
}

/** How many items a listing shows: a whole number from 1 to 1000. */
export function parseLimit(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isInteger(n) || n < 1 || n > 1000) throw new InvalidArgumentError('expected a whole number from 1 to 1000');
  return n;
}

/** A TCP port (0 picks a free one). */
export function parsePort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('expected a port number from 0 to 65535');
  return n;
}

/** Longest task queue name Temporal takes. */
const MAX_QUEUE_NAME = 1000;

/** Task queue names separated by commas (`harness,my-app`), each trimmed, each once. */
export function parseQueues(value: string): string[] {
  const names = value.split(',').map((q) => q.trim());
  const example = 'give task queue names separated by commas, e.g. --queues harness,my-app';
  if (names.some((q) => q === '')) throw new InvalidArgumentError(`a queue name is empty; ${example}`);
  // eslint-disable-next-line no-control-regex
  const bad = names.find((q) => q.length > MAX_QUEUE_NAME || /[\u0000-\u001f\u007f]/.test(q));
  if (bad !== undefined) throw new InvalidArgumentError(`a queue name is longer than ${MAX_QUEUE_NAME} characters or holds control characters; ${example}`);
  return [...new Set(names)];
}
