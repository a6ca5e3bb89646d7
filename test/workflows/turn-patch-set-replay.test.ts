/**
 * A trial's turn told its patch set in its input (`patchSet`) records no marker of the set. A
 * worker that does not read `patchSet` (an older one, during a rolling deploy) records the marker
 * anyway; a worker that replays such a run must still take that marker, or the marker left
 * unmatched is a non-determinism error and the turn is stuck. The run here is a stored eval
 * trial's turn (it has the marker), its input given the `patchSet` the eval now sends.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { expect, inject, it } from 'vitest';
import { replayHistory } from '../../history/replay/replay';
import { TURN_PATCH_SET } from '../../workflows/turn/patches';

const STORED = path.join(__dirname, '..', 'histories', 'eval-v5', 'history-eval-v5-shell-t1.turn-1.json');

/** The stored history with `patchSet` added to its turn's input (its first event). */
function withPatchSetInput(): unknown {
  const json = JSON.parse(readFileSync(STORED, 'utf8')) as { events: Array<Record<string, { input?: { payloads: Array<{ data: string }> } }>> };
  const payload = json.events[0]!.workflowExecutionStartedEventAttributes!.input!.payloads[0]!;
  const input = JSON.parse(Buffer.from(payload.data, 'base64').toString('utf8')) as Record<string, unknown>;
  payload.data = Buffer.from(JSON.stringify({ ...input, patchSet: TURN_PATCH_SET })).toString('base64');
  return json;
}

it("replays a turn told its patch set whose run recorded the set's marker all the same", async () => {
  const history = historyFromJSON(withPatchSetInput());
  expect(await replayHistory(history, 'history-eval-v5-shell-t1/turn-1', inject('workflowBundle'))).toEqual({ ok: true });
});
