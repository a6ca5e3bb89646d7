import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listFiles, MAX_LIST_ENTRIES, readFile, utf8Prefix, writeFile } from '../../../activities/tools/files';

let tmp: string;
let root: string;
let outside: string;

beforeEach(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'files-test-')));
  root = path.join(tmp, 'ws');
  outside = path.join(tmp, 'outside');
  fs.mkdirSync(root);
  fs.mkdirSync(outside);
});

afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('readFile', () => {
  it('returns the content, byte count and truncated=false for a small file', async () => {
    fs.writeFileSync(path.join(root, 'a.txt'), 'héllo');
    expect(await readFile(root, { path: 'a.txt' })).toEqual({
      ok: true,
      result: { path: 'a.txt', content: 'héllo', bytes: 6, truncated: false },
    });
  });

  it('truncates at max_bytes and reports the total size', async () => {
    fs.writeFileSync(path.join(root, 'big.txt'), 'x'.repeat(50));
    const r = await readFile(root, { path: 'big.txt', max_bytes: 10 });
    expect(r.result).toEqual({ path: 'big.txt', content: 'x'.repeat(10), bytes: 10, truncated: true, total_bytes: 50 });
  });

  it('does not call a file of exactly max_bytes truncated', async () => {
    fs.writeFileSync(path.join(root, 'exact.txt'), 'x'.repeat(10));
    expect((await readFile(root, { path: 'exact.txt', max_bytes: 10 })).result).toMatchObject({ truncated: false, bytes: 10 });
  });

  it('never splits a multi-byte character when truncating', async () => {
    fs.writeFileSync(path.join(root, 'u.txt'), 'ab€€'); // € is 3 bytes
    const r = await readFile(root, { path: 'u.txt', max_bytes: 4 });
    expect(r.result).toMatchObject({ content: 'ab', bytes: 2, truncated: true });
  });

  it('reports a missing file as FILE_NOT_FOUND with a list_files suggestion', async () => {
    const r = await readFile(root, { path: 'nope.txt' });
    expect(r).toMatchObject({ ok: false, error_type: 'FILE_NOT_FOUND', recoverable: true });
    expect(r.message).toContain('nope.txt');
    expect(r.suggestion).toBe('use list_files to see what exists');
  });

  it('reports a folder as EXECUTION_ERROR', async () => {
    fs.mkdirSync(path.join(root, 'dir'));
    expect(await readFile(root, { path: 'dir' })).toMatchObject({ ok: false, error_type: 'EXECUTION_ERROR' });
  });

  it.each(['../../etc/passwd', '/etc/passwd', 'a/../../x'])('refuses %s with PATH_OUTSIDE_WORKSPACE', async (p) => {
    expect(await readFile(root, { path: p })).toMatchObject({
      ok: false,
      error_type: 'PATH_OUTSIDE_WORKSPACE',
      recoverable: true,
      suggestion: 'use a path relative to the workspace',
    });
  });

  it('refuses to read through a symlinked folder pointing to /etc', async () => {
    fs.symlinkSync('/etc', path.join(root, 'link'));
    const r = await readFile(root, { path: 'link/passwd' });
    expect(r).toMatchObject({ ok: false, error_type: 'PATH_OUTSIDE_WORKSPACE' });
    expect(r.result).toBeUndefined();
  });

  it('refuses to read a symlinked file pointing outside', async () => {
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret');
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'secret.txt'));
    const r = await readFile(root, { path: 'secret.txt' });
    expect(r).toMatchObject({ ok: false, error_type: 'PATH_OUTSIDE_WORKSPACE' });
    expect(JSON.stringify(r)).not.toContain('secret"');
  });

  it('refuses a symlinked folder on the path with PATH_OUTSIDE_WORKSPACE, saying it is a symbolic link', async () => {
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'TOP-SECRET');
    fs.mkdirSync(path.join(root, 'a'));
    fs.symlinkSync('../../outside', path.join(root, 'a/link'));
    const r = await readFile(root, { path: 'a/link/secret.txt' });
    expect(r).toMatchObject({ ok: false, error_type: 'PATH_OUTSIDE_WORKSPACE', suggestion: 'use a path relative to the workspace' });
    expect(r.message).toContain('symbolic link');
    expect(JSON.stringify(r)).not.toContain('TOP-SECRET');
  });

  it('refuses a FIFO at once instead of waiting for a writer', async () => {
    execFileSync('mkfifo', [path.join(root, 'pipe')]);
    const r = await readFile(root, { path: 'pipe' });
    expect(r).toMatchObject({ ok: false, error_type: 'EXECUTION_ERROR' });
    expect(r.message).toContain('not a regular file');
  });

  it('reads through symlinked folders and files that stay inside the workspace', async () => {
    fs.mkdirSync(path.join(root, 'real'));
    fs.writeFileSync(path.join(root, 'real/f.txt'), 'deep');
    fs.symlinkSync('real', path.join(root, 'alias'));
    fs.symlinkSync('alias/f.txt', path.join(root, 'f-link'));
    expect((await readFile(root, { path: 'alias/f.txt' })).result).toMatchObject({ content: 'deep' });
    expect((await readFile(root, { path: 'f-link' })).result).toMatchObject({ path: 'f-link', content: 'deep' });
  });

  it('reads through a symlink that stays inside the workspace', async () => {
    fs.writeFileSync(path.join(root, 'real.txt'), 'inside');
    fs.symlinkSync('real.txt', path.join(root, 'alias.txt'));
    expect((await readFile(root, { path: 'alias.txt' })).result).toMatchObject({ path: 'alias.txt', content: 'inside' });
  });
});

describe('writeFile', () => {
  it('creates parent folders and reports the bytes written', async () => {
    const r = await writeFile(root, { path: 'a/b/c.txt', content: 'héllo' });
    expect(r).toEqual({ ok: true, result: { path: 'a/b/c.txt', bytes_written: 6 } });
    expect(fs.readFileSync(path.join(root, 'a/b/c.txt'), 'utf8')).toBe('héllo');
  });

  it('overwrites by default and appends when asked', async () => {
    await writeFile(root, { path: 'f.txt', content: 'one' });
    await writeFile(root, { path: 'f.txt', content: 'two' });
    await writeFile(root, { path: 'f.txt', content: '+three', append: true });
    expect(fs.readFileSync(path.join(root, 'f.txt'), 'utf8')).toBe('two+three');
  });

  it.each(['../../etc/passwd', '/etc/passwd', 'a/../../x'])('refuses %s with PATH_OUTSIDE_WORKSPACE', async (p) => {
    expect(await writeFile(root, { path: p, content: 'x' })).toMatchObject({ ok: false, error_type: 'PATH_OUTSIDE_WORKSPACE' });
  });

  it('refuses to write through a symlinked folder pointing to /etc', async () => {
    fs.symlinkSync('/etc', path.join(root, 'link'));
    const r = await writeFile(root, { path: 'link/passwd', content: 'pwned' });
    expect(r).toMatchObject({ ok: false, error_type: 'PATH_OUTSIDE_WORKSPACE' });
  });

  it('writes nothing outside when the target folder is a symlink pointing outside', async () => {
    fs.symlinkSync(outside, path.join(root, 'link'));
    const r = await writeFile(root, { path: 'link/new/file.txt', content: 'pwned' });
    expect(r).toMatchObject({ ok: false, error_type: 'PATH_OUTSIDE_WORKSPACE' });
    expect(fs.readdirSync(outside)).toEqual([]);
  });

  it('refuses to overwrite a symlinked file pointing outside, leaving it intact', async () => {
    fs.writeFileSync(path.join(outside, 'target.txt'), 'original');
    fs.symlinkSync(path.join(outside, 'target.txt'), path.join(root, 'f.txt'));
    expect(await writeFile(root, { path: 'f.txt', content: 'pwned' })).toMatchObject({ error_type: 'PATH_OUTSIDE_WORKSPACE' });
    expect(fs.readFileSync(path.join(outside, 'target.txt'), 'utf8')).toBe('original');
  });

  it('refuses to create a file through a dangling symlink pointing outside', async () => {
    fs.symlinkSync(path.join(outside, 'created.txt'), path.join(root, 'dangling'));
    expect(await writeFile(root, { path: 'dangling', content: 'pwned' })).toMatchObject({ error_type: 'PATH_OUTSIDE_WORKSPACE' });
    expect(fs.readdirSync(outside)).toEqual([]);
  });

  it('refuses to write to a FIFO that has no reader, at once', async () => {
    execFileSync('mkfifo', [path.join(root, 'pipe')]);
    const r = await writeFile(root, { path: 'pipe', content: 'x' });
    expect(r).toMatchObject({ ok: false, error_type: 'EXECUTION_ERROR' });
    expect(r.message).toContain('not a regular file');
  });

  it('refuses to write to a FIFO that has a reader, sending it nothing', async () => {
    execFileSync('mkfifo', [path.join(root, 'pipe')]);
    const reader = fs.openSync(path.join(root, 'pipe'), fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    try {
      expect(await writeFile(root, { path: 'pipe', content: 'x', append: true })).toMatchObject({ ok: false, error_type: 'EXECUTION_ERROR' });
      // 0: end of stream, the write opened and closed the FIFO without sending a byte.
      expect(fs.readSync(reader, Buffer.alloc(8))).toBe(0);
    } finally {
      fs.closeSync(reader);
    }
  });

  it('writes through a symlinked folder that stays inside, into its real folder', async () => {
    fs.mkdirSync(path.join(root, 'real'));
    fs.symlinkSync('real', path.join(root, 'alias'));
    expect(await writeFile(root, { path: 'alias/new/f.txt', content: 'hi' })).toMatchObject({ ok: true });
    expect(fs.readFileSync(path.join(root, 'real/new/f.txt'), 'utf8')).toBe('hi');
  });

  it('refuses a write that would take the workspace over its budget with WORKSPACE_FULL, creating nothing', async () => {
    expect(await writeFile(root, { path: 'a.txt', content: 'x'.repeat(6000) }, { maxBytes: 10_000 })).toMatchObject({ ok: true });
    const r = await writeFile(root, { path: 'sub/b.txt', content: 'y'.repeat(6000) }, { maxBytes: 10_000 });
    expect(r).toMatchObject({ ok: false, error_type: 'WORKSPACE_FULL', recoverable: true, suggestion: 'delete files that are no longer needed, or write less' });
    expect(r.message).toContain('10000');
    expect(fs.existsSync(path.join(root, 'sub/b.txt'))).toBe(false);
  });

  it('counts an append by the bytes it adds and an overwrite by the difference', async () => {
    await writeFile(root, { path: 'a.txt', content: 'x'.repeat(6000) }, { maxBytes: 10_000 });
    expect(await writeFile(root, { path: 'a.txt', content: 'y'.repeat(6000), append: true }, { maxBytes: 10_000 })).toMatchObject({
      error_type: 'WORKSPACE_FULL',
    });
    expect(await writeFile(root, { path: 'a.txt', content: 'z'.repeat(7000) }, { maxBytes: 10_000 })).toMatchObject({ ok: true });
    expect(fs.readFileSync(path.join(root, 'a.txt'), 'utf8')).toBe('z'.repeat(7000));
  });

  it('sees what other processes wrote and still lets a full workspace shrink', async () => {
    fs.writeFileSync(path.join(root, 'big.bin'), Buffer.alloc(50_000, 1));
    expect(await writeFile(root, { path: 'more.txt', content: 'x' }, { maxBytes: 10_000 })).toMatchObject({ error_type: 'WORKSPACE_FULL' });
    expect(await writeFile(root, { path: 'big.bin', content: 'small now' }, { maxBytes: 10_000 })).toMatchObject({ ok: true });
    expect(await writeFile(root, { path: 'more.txt', content: 'x' }, { maxBytes: 10_000 })).toMatchObject({ ok: true });
  });

  it('reports writing onto a folder as EXECUTION_ERROR', async () => {
    fs.mkdirSync(path.join(root, 'dir'));
    expect(await writeFile(root, { path: 'dir', content: 'x' })).toMatchObject({ ok: false, error_type: 'EXECUTION_ERROR' });
  });

  it('reports a parent that is a file as EXECUTION_ERROR', async () => {
    fs.writeFileSync(path.join(root, 'file'), 'x');
    expect(await writeFile(root, { path: 'file/child.txt', content: 'x' })).toMatchObject({ ok: false, error_type: 'EXECUTION_ERROR' });
  });
});

describe('listFiles', () => {
  beforeEach(() => {
    fs.mkdirSync(path.join(root, 'sub/deeper'), { recursive: true });
    fs.writeFileSync(path.join(root, 'b.txt'), '12345');
    fs.writeFileSync(path.join(root, 'sub/a.txt'), 'x');
    fs.writeFileSync(path.join(root, 'sub/deeper/z.txt'), 'xy');
    fs.symlinkSync('/etc', path.join(root, 'etc-link'));
  });

  it('lists the top level sorted, with types and sizes, showing symlinks without following them', async () => {
    expect(await listFiles(root, {})).toEqual({
      ok: true,
      result: {
        path: '.',
        truncated: false,
        entries: [
          { path: 'b.txt', type: 'file', size: 5 },
          { path: 'etc-link', type: 'symlink', size: 0 },
          { path: 'sub', type: 'dir', size: 0 },
        ],
      },
    });
  });

  it('walks sub-folders when recursive but never descends into a symlink', async () => {
    const r = await listFiles(root, { recursive: true });
    const paths = (r.result as { entries: { path: string }[] }).entries.map((e) => e.path);
    expect(paths).toEqual(['b.txt', 'etc-link', 'sub', 'sub/a.txt', 'sub/deeper', 'sub/deeper/z.txt']);
  });

  it('lists a sub-folder with paths relative to the workspace', async () => {
    const r = await listFiles(root, { path: 'sub/' });
    expect(r.result).toMatchObject({ path: 'sub', entries: [{ path: 'sub/a.txt' }, { path: 'sub/deeper' }] });
  });

  it('caps the listing at the entry limit and says it is truncated', async () => {
    const many = path.join(root, 'many');
    fs.mkdirSync(many);
    for (let i = 0; i < MAX_LIST_ENTRIES + 5; i++) fs.writeFileSync(path.join(many, `f${i}`), '');
    const r = await listFiles(root, { path: 'many' });
    expect(r.result).toMatchObject({ truncated: true });
    expect((r.result as { entries: unknown[] }).entries).toHaveLength(MAX_LIST_ENTRIES);
  });

  it('reports a missing folder as FILE_NOT_FOUND', async () => {
    expect(await listFiles(root, { path: 'ghost' })).toMatchObject({ ok: false, error_type: 'FILE_NOT_FOUND' });
  });

  it('refuses to list through a symlink pointing outside', async () => {
    expect(await listFiles(root, { path: 'etc-link' })).toMatchObject({ ok: false, error_type: 'PATH_OUTSIDE_WORKSPACE' });
  });

  it.each(['..', '/etc', 'sub/../../x'])('refuses %s with PATH_OUTSIDE_WORKSPACE', async (p) => {
    expect(await listFiles(root, { path: p })).toMatchObject({ ok: false, error_type: 'PATH_OUTSIDE_WORKSPACE' });
  });

  it('refuses to list a FIFO', async () => {
    execFileSync('mkfifo', [path.join(root, 'pipe')]);
    expect(await listFiles(root, { path: 'pipe' })).toMatchObject({ ok: false, error_type: 'EXECUTION_ERROR', message: '"pipe" is not a folder' });
  });

  it('lists a symlinked folder that stays inside under the name it was asked by', async () => {
    fs.symlinkSync('sub', path.join(root, 'alias'));
    const r = await listFiles(root, { path: 'alias', recursive: true });
    expect((r.result as { entries: { path: string }[] }).entries.map((e) => e.path)).toEqual(['alias/a.txt', 'alias/deeper', 'alias/deeper/z.txt']);
  });

  it('reports listing a file as EXECUTION_ERROR suggesting read_file', async () => {
    expect(await listFiles(root, { path: 'b.txt' })).toMatchObject({ error_type: 'EXECUTION_ERROR', suggestion: 'use read_file to read it' });
  });
});

describe('utf8Prefix', () => {
  it('keeps a buffer within the limit unchanged and cuts before a split character', () => {
    expect(utf8Prefix(Buffer.from('abc'), 3).toString()).toBe('abc');
    expect(utf8Prefix(Buffer.from('a€'), 3).toString()).toBe('a');
    expect(utf8Prefix(Buffer.from('a€b'), 4).toString()).toBe('a€');
  });
});
