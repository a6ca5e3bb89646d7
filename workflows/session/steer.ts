/**
 * A message sent while a turn runs (SendMessageInput.whileRunning): refused with `reject`, else
 * forwarded to the running turn as a `steer` signal (workflows/turn/steer.ts), which gives it to
 * the model at its next step. A turn that ended before the signal reached it cannot take it: the
 * message then runs as the session's next turn, as a message sent to an idle session does.
 */
import { condition, currentUpdateInfo, getExternalWorkflowHandle, patched } from '@temporalio/workflow';
import { steerSignal, WHILE_RUNNING, type SendMessageInput, type SendMessageResult } from '../../deterministic/messages';
import type { SessionTracker } from './tracker';

/** Since this patch a message sent while a turn runs is forwarded to it instead of refused. Taken directly, where such a message arrives. */
export const SESSION_STEER_PATCH = 'steer-running-turn';

/** The validator's check of whileRunning; throws the refusal a running session gives. */
export function checkWhileRunning(msg: SendMessageInput, running: boolean, turnId: string | undefined): void {
  const w = msg.whileRunning;
  if (w !== undefined && !WHILE_RUNNING.includes(w)) throw new Error(`whileRunning must be one of ${WHILE_RUNNING.join(', ')}`);
  if (running && w === 'reject') throw new Error(`a turn is already running (${turnId ?? 'queued'}); wait for it to finish, or send without reject to queue the message for it`);
}

/**
 * The update's handler for a message that arrived while a turn runs or is about to start:
 * `undefined` when this run keeps the refusal of before (no patch) and the message is handled as
 * one for an idle session. `queue` is the session's queue of messages not yet started as turns.
 */
export async function steerRunningTurn(
  tracker: SessionTracker,
  queue: SendMessageInput[],
  msg: SendMessageInput,
): Promise<SendMessageResult | undefined> {
  if (!patched(SESSION_STEER_PATCH)) return undefined;
  const waitStarted = (turn: number) => condition(() => tracker.startedTurns >= turn);
  const id = currentUpdateInfo()?.id ?? '';
  // The last turn started or queued takes it: once it has started, it is told.
  const turn = tracker.turnCount + queue.length + (tracker.busy ? 1 : 0);
  await waitStarted(turn);
  const turnId = tracker.turnId(turn);
  const mode = msg.whileRunning === 'interrupt' ? 'interrupt' : 'queue';
  if (tracker.busy && tracker.currentTurnId === turnId) {
    try {
      await getExternalWorkflowHandle(turnId).signal(steerSignal, { id, text: msg.text, mode });
      return { turn, turnId, steered: mode };
    } catch {
      // The turn closed before the signal reached it: the message becomes the next turn.
    }
  }
  const next = tracker.turnCount + queue.length + 1;
  queue.push(msg);
  await waitStarted(next);
  return { turn: next, turnId: tracker.turnId(next) };
}
