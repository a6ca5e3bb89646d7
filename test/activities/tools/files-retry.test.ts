/**
 * write_file through the executor as the activity runs it: retried appends apply once, and the
 * workspace budget comes from the executor's deps.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appliedRef, recordAppend } from '../../../activities/tools/applied-writes';
import { createToolExecutor, type ToolExecutionRequest } from '../../../activities/tools/executor';

let home: string;

beforeEach(() => {
  home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'files-retry-')));
});

afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

const LINE = 'one line\n';

function append(callId?: string, content = LINE): ToolExecutionRequest {
  return {
    sessionId: 's1',
    name: 'write_file',
    args: { path: 'log/app.log', content, append: true },
    ...(callId ? { turnId: 's1/turn-1', callId } : {}),
  };
}

function occurrences(): number {
  const text = fs.readFileSync(path.join(home, 'workspaces/s1/log/app.log'), 'utf8');
  return text.split(LINE).length - 1;
}

describe('write_file append across activity retries', () => {
  it('appends once when the same call runs twice, and again for another call', async () => {
    const ex = createToolExecutor({ home });
    const first = await ex.execute(append('c1'));
    expect(first).toEqual({ ok: true, result: { path: 'log/app.log', bytes_written: LINE.length } });
    // The retry of a call whose first attempt appended but never reported: same result, no second copy.
    expect(await ex.execute(append('c1'))).toEqual(first);
    expect(occurrences()).toBe(1);
    expect(await ex.execute(append('c2'))).toMatchObject({ ok: true });
    expect(occurrences()).toBe(2);
  });

  it('recognises its own text after other appends made it no longer the end of the file', async () => {
    const ex = createToolExecutor({ home });
    await ex.execute(append('c1'));
    await ex.execute(append('c2', 'other\n'));
    await ex.execute(append('c1'));
    expect(fs.readFileSync(path.join(home, 'workspaces/s1/log/app.log'), 'utf8')).toBe(`${LINE}other\n`);
  });

  it('appends on the retry when the first attempt recorded the call but died before appending', async () => {
    const ex = createToolExecutor({ home });
    await ex.execute(append('c0'));
    const ws = path.join(home, 'workspaces/s1');
    await recordAppend(appliedRef(home, ws, 's1/turn-1/c1')!, 'log/app.log', Buffer.from(LINE), fs.statSync(path.join(ws, 'log/app.log')).size);
    await ex.execute(append('c1'));
    expect(occurrences()).toBe(2);
    await ex.execute(append('c1'));
    expect(occurrences()).toBe(2);
  });

  it('keeps its records on the host, outside the workspace the sandbox sees', async () => {
    await createToolExecutor({ home }).execute(append('c1'));
    expect(fs.readdirSync(path.join(home, 'workspaces/s1'))).toEqual(['log']);
    expect(fs.readdirSync(path.join(home, 'applied/s1'))).toHaveLength(1);
  });

  it('appends every time for direct calls, which name no call', async () => {
    const ex = createToolExecutor({ home });
    await ex.execute(append());
    await ex.execute(append());
    expect(occurrences()).toBe(2);
    expect(fs.existsSync(path.join(home, 'applied'))).toBe(false);
  });
});

describe('write_file workspace budget', () => {
  it('refuses a write over the executor\'s workspaceMaxBytes with WORKSPACE_FULL', async () => {
    const ex = createToolExecutor({ home, workspaceMaxBytes: 20_000 });
    const write = (p: string) => ex.execute({ sessionId: 's1', name: 'write_file', args: { path: p, content: 'x'.repeat(12_000) } });
    expect(await write('a.txt')).toMatchObject({ ok: true });
    const r = await write('b.txt');
    expect(r).toMatchObject({ ok: false, error_type: 'WORKSPACE_FULL', recoverable: true });
    expect(r.suggestion).toContain('delete files');
    expect(fs.readdirSync(path.join(home, 'workspaces/s1'))).toEqual(['a.txt']);
  });

  it('does not refuse the retry of an append that was already applied, even when the workspace is now full', async () => {
    const ex = createToolExecutor({ home, workspaceMaxBytes: 20_000 });
    const big = append('c1', 'y'.repeat(15_000));
    expect(await ex.execute(big)).toMatchObject({ ok: true });
    expect(await ex.execute(big)).toMatchObject({ ok: true });
    expect(fs.statSync(path.join(home, 'workspaces/s1/log/app.log')).size).toBe(15_000);
  });
});
