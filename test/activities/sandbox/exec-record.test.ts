import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commandSha, ExecRecords, execsDir, recordId, type ExecMeta, type ExecResult } from '../../../activities/sandbox/exec-record';

let home: string;
let records: ExecRecords;
const meta = (over: Partial<ExecMeta> = {}): ExecMeta => ({
  v: 1,
  key: 'turn-1/call-1',
  commandSha: commandSha('true'),
  timeoutMs: 1_000,
  maxOutputBytes: 100,
  startedAt: Date.now(),
  ...over,
});
const result = (stdout: string): ExecResult => ({ exitCode: 0, stdout, stderr: '', truncated: false, droppedBytes: 0, timedOut: false, durationMs: 1 });

beforeEach(async () => {
  home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'exec-record-test-')));
  records = new ExecRecords(execsDir(home, 's1'), undefined);
  await records.ensure();
});

afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

describe('ExecRecords', () => {
  it('lets exactly one of several concurrent claims of a key win', async () => {
    const id = recordId('turn-1/call-1');
    const wins = await Promise.all(Array.from({ length: 8 }, () => records.claim(id, meta())));
    expect(wins.filter(Boolean)).toHaveLength(1);
    expect(await records.readClaim(id)).toMatchObject({ key: 'turn-1/call-1', timeoutMs: 1_000 });
  });

  it('keeps the first stored result and hands it to later writers', async () => {
    const id = recordId('k');
    expect(await records.storeResult(id, result('first'))).toMatchObject({ stdout: 'first' });
    expect(await records.storeResult(id, result('second'))).toMatchObject({ stdout: 'first' });
    expect(await records.readResult(id)).toMatchObject({ stdout: 'first' });
  });

  it('reads the status only when it is a whole number', async () => {
    const id = recordId('k');
    await records.claim(id, meta());
    const status = path.join(records.dir, id, 'status');
    expect(await records.status(id)).toBeUndefined();
    fs.writeFileSync(status, '');
    expect(await records.status(id)).toBeUndefined();
    fs.writeFileSync(status, '153\n');
    expect(await records.status(id)).toEqual({ code: 153, at: fs.statSync(status).mtimeMs });
  });

  it('reads a huge output file as head and tail without loading it, and ignores a FIFO or a symlink put in its place', async () => {
    const id = recordId('k');
    await records.claim(id, meta());
    const dir = path.join(records.dir, id);
    fs.writeFileSync(path.join(dir, 'out'), `${'h'.repeat(50)}${'m'.repeat(1_000_000)}${'t'.repeat(50)}`);
    execFileSync('mkfifo', [path.join(dir, 'err')]);
    const { stdout, stderr } = await records.outputs(id, 100);
    expect(stdout.text()).toBe(`${'h'.repeat(50)}\n[... 1000000 bytes dropped ...]\n${'t'.repeat(50)}`);
    expect(stderr.text()).toBe('');
    fs.writeFileSync(path.join(home, 'secret'), 'SECRET');
    fs.rmSync(path.join(dir, 'out'));
    fs.symlinkSync(path.join(home, 'secret'), path.join(dir, 'out'));
    expect((await records.outputs(id, 100)).stdout.text()).toBe('');
  });

  it('drops only the raw output on discard, keeping the claim, the result and whatever a link inside pointed to', async () => {
    const id = recordId('k');
    await records.claim(id, meta());
    await records.storeResult(id, result('kept'));
    const outside = path.join(home, 'outside');
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(outside, 'precious'), 'x');
    fs.symlinkSync(outside, path.join(records.dir, id, 'link'));
    fs.writeFileSync(path.join(records.dir, id, 'out'), 'raw');
    await records.discardOutputs(id);
    expect(fs.existsSync(path.join(records.dir, id))).toBe(false);
    expect(fs.readFileSync(path.join(outside, 'precious'), 'utf8')).toBe('x');
    expect(await records.readResult(id)).toMatchObject({ stdout: 'kept' });
    expect(await records.readClaim(id)).toBeDefined();
  });

  it('prunes records claimed before the cut-off and keeps recent ones', async () => {
    const old = recordId('old');
    const recent = recordId('recent');
    await records.claim(old, meta());
    await records.storeResult(old, result('old'));
    await records.claim(recent, meta());
    const past = new Date(Date.now() - 2 * 24 * 3_600_000);
    for (const name of [`${old}.claim`, `${old}.result`, old]) fs.utimesSync(path.join(records.dir, name), past, past);
    await records.prune(24 * 3_600_000);
    expect(fs.readdirSync(records.dir).sort()).toEqual([recent, `${recent}.claim`].sort());
  });
});
