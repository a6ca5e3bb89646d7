/**
 * Steering: user messages sent to a turn while it runs (the session forwards them as `steer`
 * signals, which are the record of them in the turn's history). The loop adds them to the
 * conversation as user messages at its next step boundary, in arrival order, and does not end on
 * a final answer while one is unread. An `interrupt` message also cancels the calls of the step
 * that is running: they get the usual cancelled result and the turn goes on with the message.
 */
import { CancellationScope, isCancellation, patched, setHandler } from '@temporalio/workflow';
import { steerSignal, utf8Length, MAX_MESSAGE_BYTES, type SteerInput } from '../../deterministic/messages';
import type { TurnState } from '../../deterministic/session-state';
import type { RunEvents } from './run-events';

/** Since this patch a turn takes the messages its session forwards while it runs. Taken directly, where the first arrives. */
export const STEER_PATCH = 'steer-running-turn';

/** What the loop asks of the turn's steering (TurnOps.steering). */
export interface Steering {
  /** The messages that arrived since the last call, in arrival order (each then counts as read). */
  take(): string[];
  /** Whether a message is waiting for the model. */
  unread(): boolean;
  /** Runs a step's calls; resolves `true` when an interrupt cancelled them (the turn itself was not cancelled). */
  interruptible(run: () => Promise<void>): Promise<boolean>;
}

/** Registers the turn's steer signal (before its first await) and returns what the loop uses. */
export function registerSteering(state: TurnState, events: RunEvents): Steering {
  const queued: SteerInput[] = [];
  let step: CancellationScope | undefined;
  let interrupted = false;
  const count = () => {
    state.queued = queued.length || undefined;
  };
  setHandler(steerSignal, (msg) => {
    // A signal is never refused; a malformed one (not from a session) is ignored.
    if (typeof msg?.text !== 'string' || msg.text.trim() === '' || utf8Length(msg.text) > MAX_MESSAGE_BYTES) return;
    if (!patched(STEER_PATCH)) return;
    events.add('message');
    queued.push({ id: String(msg.id ?? ''), text: msg.text, mode: msg.mode === 'interrupt' ? 'interrupt' : 'queue' });
    count();
    if (msg.mode === 'interrupt' && step) {
      interrupted = true;
      step.cancel();
    }
  });
  return {
    take: () => {
      const texts = queued.splice(0).map((m) => m.text);
      count();
      return texts;
    },
    unread: () => queued.length > 0,
    async interruptible(run) {
      // An interrupt that came while the model was deciding this step: its calls do not run at all.
      if (queued.some((m) => m.mode === 'interrupt')) return true;
      step = new CancellationScope();
      interrupted = false;
      try {
        await step.run(run);
        return false;
      } catch (err) {
        // Only our interrupt is swallowed: a cancellation of the turn itself ends it as before.
        if (interrupted && isCancellation(err) && !CancellationScope.current().consideredCancelled) return true;
        throw err;
      } finally {
        step = undefined;
      }
    },
  };
}
