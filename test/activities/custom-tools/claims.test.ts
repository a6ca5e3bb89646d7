/** Claims of custom tool calls: one attempt runs, a later one finds the claim or the result, the first result wins. */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { claimCall, settleCall } from '../../../activities/custom-tools/claims';
import { toolError, toolOk } from '../../../deterministic/errors';

it('lets the first attempt run, tells a later one it did not finish, then returns the first result recorded', async () => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'harness-claims-'));
  const key = 's-1/turn-1/t1-s1-c0';
  expect(await claimCall(home, 's-1', key)).toEqual({ kind: 'run' });
  const again = await claimCall(home, 's-1', key);
  expect(again.kind).toBe('unfinished');
  if (again.kind === 'unfinished') expect(again.by).toMatch(/ pid \d+$/);
  // Two attempts settle (one slow, one that found the claim): the first result stands for both.
  expect(await settleCall(home, 's-1', key, toolOk({ charged: true }))).toEqual(toolOk({ charged: true }));
  expect(await settleCall(home, 's-1', key, toolError('EXECUTION_ERROR', 'unsure'))).toEqual(toolOk({ charged: true }));
  expect(await claimCall(home, 's-1', key)).toEqual({ kind: 'done', result: toolOk({ charged: true }) });
  // Another call, another session: claims of their own.
  expect(await claimCall(home, 's-1', 's-1/turn-1/t1-s1-c1')).toEqual({ kind: 'run' });
  expect(await claimCall(home, 's-2', key)).toEqual({ kind: 'run' });
});
