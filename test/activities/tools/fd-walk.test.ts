import * as fs from 'node:fs';
import { constants } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { locate, MAX_LINK_HOPS, type Located } from '../../../activities/tools/fd-walk';
import { WorkspaceError } from '../../../activities/tools/workspace';

let tmp: string;
let root: string;
let outside: string;

beforeEach(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'fd-walk-test-')));
  root = path.join(tmp, 'ws');
  outside = path.join(tmp, 'outside');
  fs.mkdirSync(root);
  fs.mkdirSync(outside);
});

afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The folder a Located points into (as a real path) and the entry name, then closes it. */
async function where(loc: Located): Promise<[string, string]> {
  try {
    return [fs.realpathSync(`/proc/self/fd/${loc.dir.fd}`), loc.name];
  } finally {
    await loc.close();
  }
}

async function refusal(userPath: string, opts: { createFolders?: boolean } = {}): Promise<WorkspaceError> {
  const err = await locate(root, userPath, opts).then(
    async (loc) => {
      await loc.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkspaceError);
  return err as WorkspaceError;
}

describe('locate', () => {
  it('finds an entry by its folder and name, without needing it to exist', async () => {
    fs.mkdirSync(path.join(root, 'a'));
    expect(await where(await locate(root, 'a/new.txt'))).toEqual([path.join(root, 'a'), 'new.txt']);
  });

  it('gives the root itself as "." in the root', async () => {
    expect(await where(await locate(root, '.'))).toEqual([root, '.']);
  });

  it('follows a symlinked folder that stays inside to its real folder', async () => {
    fs.mkdirSync(path.join(root, 'real/deep'), { recursive: true });
    fs.symlinkSync('real/deep', path.join(root, 'alias'));
    expect(await where(await locate(root, 'alias/x.txt'))).toEqual([path.join(root, 'real/deep'), 'x.txt']);
  });

  it('resolves .. in a link target against the folder the link is in, like the kernel', async () => {
    fs.mkdirSync(path.join(root, 'a/b'), { recursive: true });
    fs.mkdirSync(path.join(root, 'c'));
    fs.symlinkSync('../../c', path.join(root, 'a/b/up'));
    expect(await where(await locate(root, 'a/b/up/f'))).toEqual([path.join(root, 'c'), 'f']);
  });

  it('follows a symlink in the final component to the entry it names', async () => {
    fs.writeFileSync(path.join(root, 'real.txt'), 'x');
    fs.symlinkSync('real.txt', path.join(root, 'alias.txt'));
    expect(await where(await locate(root, 'alias.txt'))).toEqual([root, 'real.txt']);
  });

  it('refuses a symlinked folder that climbs out of the workspace, saying so', async () => {
    fs.symlinkSync('../outside', path.join(root, 'link'));
    const err = await refusal('link/secret.txt');
    expect(err.errorType).toBe('PATH_OUTSIDE_WORKSPACE');
    expect(err.message).toBe('path "link/secret.txt" leads outside the workspace through a symbolic link');
  });

  it('refuses a symlink with an absolute target even when it names a folder inside', async () => {
    fs.mkdirSync(path.join(root, 'real'));
    fs.symlinkSync(path.join(root, 'real'), path.join(root, 'abs'));
    expect((await refusal('abs/x')).errorType).toBe('PATH_OUTSIDE_WORKSPACE');
  });

  it('refuses a dangling final symlink pointing outside instead of creating through it', async () => {
    fs.symlinkSync('../outside/created.txt', path.join(root, 'dangling'));
    expect((await refusal('dangling', { createFolders: true })).errorType).toBe('PATH_OUTSIDE_WORKSPACE');
    expect(fs.readdirSync(outside)).toEqual([]);
  });

  it('stops a symlink loop with EXECUTION_ERROR', async () => {
    fs.symlinkSync('b', path.join(root, 'a'));
    fs.symlinkSync('a', path.join(root, 'b'));
    const err = await refusal('a/x');
    expect(err.errorType).toBe('EXECUTION_ERROR');
    expect(err.message).toContain('too many levels of symbolic links');
  });

  it('creates missing folders one by one when asked, and only then', async () => {
    await expect(locate(root, 'x/y/z.txt')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(fs.readdirSync(root)).toEqual([]);
    expect(await where(await locate(root, 'x/y/z.txt', { createFolders: true }))).toEqual([path.join(root, 'x/y'), 'z.txt']);
  });

  it('creates folders deeper than the symlink bound, which counts links only', async () => {
    const deep = Array.from({ length: MAX_LINK_HOPS + 5 }, (_, i) => `d${i}`).join('/');
    expect(await where(await locate(root, `${deep}/f.txt`, { createFolders: true }))).toEqual([path.join(root, deep), 'f.txt']);
  });

  it('reports a file where a folder is expected as ENOTDIR', async () => {
    fs.writeFileSync(path.join(root, 'file'), 'x');
    await expect(locate(root, 'file/child.txt')).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  it('keeps its folder when the path is renamed and a symlink put in its place after the walk', async () => {
    fs.mkdirSync(path.join(root, 'dir'));
    fs.writeFileSync(path.join(root, 'dir/f.txt'), 'inside');
    fs.writeFileSync(path.join(outside, 'f.txt'), 'secret');
    const loc = await locate(root, 'dir/f.txt');
    try {
      fs.renameSync(path.join(root, 'dir'), path.join(root, 'moved'));
      fs.symlinkSync('../outside', path.join(root, 'dir'));
      const h = await loc.open(constants.O_RDONLY);
      expect((await h.readFile()).toString()).toBe('inside');
      await h.close();
    } finally {
      await loc.close();
    }
  });

  it('refuses to open a final entry that became a symlink after the walk (ELOOP)', async () => {
    fs.writeFileSync(path.join(root, 'f.txt'), 'inside');
    const loc = await locate(root, 'f.txt');
    try {
      fs.unlinkSync(path.join(root, 'f.txt'));
      fs.symlinkSync('/etc/passwd', path.join(root, 'f.txt'));
      await expect(loc.open(constants.O_RDONLY)).rejects.toMatchObject({ code: 'ELOOP' });
    } finally {
      await loc.close();
    }
  });
});
