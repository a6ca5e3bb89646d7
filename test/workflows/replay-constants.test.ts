/**
 * The replay-relevant constants hold the values recorded histories were made with. A failure
 * here means one was edited in place: put it back, add the new value beside it under a name of
 * its own, choose between them with patched('<a-new-unique-name>') where it is read
 * (workflows/turn/replay-constants.ts says why), and list the new constant below.
 */
import { describe, expect, it } from 'vitest';
import * as constants from '../../workflows/turn/replay-constants';

const RECORDED_WITH = {
  TURN_EVENT_BUDGET_WHEN_UNSET: 4000,
  RUN_EVENT_COST: { activity: 6, local: 1, message: 5, wait: 8 },
  RUN_START_VERSION_MARKERS: 20,
  SHOWN_WITHIN_MS: 1_000,
  AFTER_UNRECORDED_MS: 500,
  MODEL_LOCAL_MS_WHEN_UNSET: 3_000,
  REPEAT_MAX_KEY_CHARS: 256,
  REPEAT_MAX_CANONICAL_CHARS: 64 * 1024,
  MAX_MEMORY_CHARS: 32 * 1024,
};

describe('replay-relevant constants', () => {
  it('are the values recorded histories were made with (a change needs a patch, not an edit)', () => {
    expect(
      { ...constants },
      'A replay-relevant constant changed (or one was added): recorded histories replay only with the old value. Keep it, add the new value under a name of its own, choose between them with patched() where it is read (workflows/turn/replay-constants.ts), then list the new constant in this test.',
    ).toEqual(RECORDED_WITH);
  });
});
