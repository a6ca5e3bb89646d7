/**
 * Every stored history must replay with the current workflow code. A failure here means a
 * change would break sessions already running: put the new logic behind patched().
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { describe, expect, inject, it } from 'vitest';
import { replayHistory } from '../../history/replay/replay';

function historyFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return historyFiles(full);
    return name.endsWith('.json') ? [full] : [];
  });
}

const files = historyFiles(__dirname);

describe('stored histories', () => {
  it('exist (at least one session and its turns)', () => {
    expect(files.length).toBeGreaterThanOrEqual(3);
  });

  it.each(files.map((f) => [path.relative(__dirname, f), f]))('%s replays without non-determinism', async (_name, file) => {
    const history = historyFromJSON(JSON.parse(readFileSync(file, 'utf8')));
    // `history-v0.4.turn-1.run2.json` is the second run of `history-v0.4/turn-1`; a sub-agent's
    // turn `history-x.turn-1.agent-c1.json` is `history-x/turn-1/agent-c1`.
    const workflowId = path.basename(file, '.json').replace(/\.run\d+$/, '').replace('.turn-', '/turn-').replace('.agent-', '/agent-');
    const outcome = await replayHistory(history, workflowId, inject('workflowBundle'));
    expect(outcome).toEqual({ ok: true });
  });
});
