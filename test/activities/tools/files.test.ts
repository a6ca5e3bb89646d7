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
