/**
 * A message sent from the console's session view: as `harness send` sends it. While a turn runs
 * it is queued for the turn's next step (`queue`, the default) or interrupts the step's calls
 * (`interrupt`); an idle session starts a turn with it. Its text is checked as every message is
 * (one line of error for an empty or too long one), and the session must exist.
 */
import { UserError } from '../machine/errors';
import { checkMessage } from '../client/session-client';
import type { ApiDeps } from './api';

export interface SendBody {
  text?: unknown;
  mode?: unknown;
}

export async function consoleSend(d: ApiDeps, sessionId: string, b: SendBody): Promise<{ turn_id: string; steered: string | null }> {
  if (typeof b.text !== 'string' || !b.text.trim()) throw new UserError('a message needs text', 'type the message');
  if (b.mode !== undefined && b.mode !== 'queue' && b.mode !== 'interrupt') throw new UserError(`mode must be queue or interrupt, not ${JSON.stringify(b.mode)}`, 'queue waits for the next step; interrupt cancels the running step\'s calls');
  checkMessage(b.text);
  const sent = await d.harness.send(b.text, { sessionId, whileRunning: b.mode === 'interrupt' ? 'interrupt' : 'queue', config: null });
  return { turn_id: sent.turnId, steered: sent.steered ?? null };
}
