import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureWorkspace, resolveInWorkspace, sessionWorkspace, WorkspaceError } from '../../../activities/tools/workspace';

let tmp: string;
let root: string;

beforeEach(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ws-test-')));
  root = path.join(tmp, 'root');
  fs.mkdirSync(root);
});

afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

async function rejection(userPath: string): Promise<WorkspaceError> {
  const err = await resolveInWorkspace(root, userPath).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkspaceError);
  return err as WorkspaceError;
}

describe('resolveInWorkspace', () => {
  it('resolves a plain relative path under the root', async () => {
    expect(await resolveInWorkspace(root, 'a/b.txt')).toBe(path.join(root, 'a', 'b.txt'));
  });

  it('resolves "." to the root itself', async () => {
    expect(await resolveInWorkspace(root, '.')).toBe(root);
  });

  it('allows .. that stays inside the root', async () => {
    expect(await resolveInWorkspace(root, 'a/../b.txt')).toBe(path.join(root, 'b.txt'));
  });

  it.each(['../../etc/passwd', 'a/../../x', '..'])('rejects %s as outside the workspace, naming the path', async (p) => {
    const err = await rejection(p);
    expect(err.errorType).toBe('PATH_OUTSIDE_WORKSPACE');
    expect(err.message).toContain(JSON.stringify(p));
  });

  it('rejects an absolute path', async () => {
    const err = await rejection('/etc/passwd');
    expect(err.errorType).toBe('PATH_OUTSIDE_WORKSPACE');
    expect(err.message).toContain('/etc/passwd');
  });

  it('rejects a sibling folder that merely shares the root as a name prefix', async () => {
    fs.mkdirSync(`${root}-other`);
    expect((await rejection('../root-other/x')).errorType).toBe('PATH_OUTSIDE_WORKSPACE');
  });

  it('rejects a path through a symlinked folder pointing outside', async () => {
    fs.symlinkSync('/etc', path.join(root, 'link'));
    expect((await rejection('link/passwd')).errorType).toBe('PATH_OUTSIDE_WORKSPACE');
  });

  it('rejects a not-yet-existing file under a symlinked folder pointing outside', async () => {
    fs.mkdirSync(path.join(tmp, 'outside'));
    fs.symlinkSync(path.join(tmp, 'outside'), path.join(root, 'link'));
    expect((await rejection('link/new/deeper.txt')).errorType).toBe('PATH_OUTSIDE_WORKSPACE');
  });

  it('rejects a symlinked file pointing outside', async () => {
    fs.writeFileSync(path.join(tmp, 'secret.txt'), 'secret');
    fs.symlinkSync(path.join(tmp, 'secret.txt'), path.join(root, 'file-link'));
    expect((await rejection('file-link')).errorType).toBe('PATH_OUTSIDE_WORKSPACE');
  });

  it('rejects a dangling symlink whose target is outside', async () => {
    fs.symlinkSync(path.join(tmp, 'not-yet.txt'), path.join(root, 'dangling'));
    expect((await rejection('dangling')).errorType).toBe('PATH_OUTSIDE_WORKSPACE');
  });

  it('follows a symlink that stays inside the workspace to its real path', async () => {
    fs.mkdirSync(path.join(root, 'real'));
    fs.symlinkSync('real', path.join(root, 'alias'));
    expect(await resolveInWorkspace(root, 'alias/x.txt')).toBe(path.join(root, 'real', 'x.txt'));
  });

  it('accepts a root that is itself reached through a symlink', async () => {
    fs.symlinkSync(root, path.join(tmp, 'root-alias'));
    expect(await resolveInWorkspace(path.join(tmp, 'root-alias'), 'x')).toBe(path.join(root, 'x'));
  });

  it('rejects a path containing a NUL byte as invalid arguments', async () => {
    expect((await rejection('a\0b')).errorType).toBe('INVALID_ARGUMENTS');
  });
});

describe('sessionWorkspace', () => {
  it('places the workspace under <home>/workspaces/<sessionId>', () => {
    expect(sessionWorkspace('/home/h', 'sess-1.a_b')).toBe('/home/h/workspaces/sess-1.a_b');
  });

  it.each(['', '../x', 'a/b', '.hidden', '-dash', 'a'.repeat(129), 'sp ace'])('rejects the bad session id %j', (id) => {
    expect(() => sessionWorkspace('/home/h', id)).toThrow(WorkspaceError);
  });

  it('accepts a 128-character session id', () => {
    expect(() => sessionWorkspace('/home/h', 'a'.repeat(128))).not.toThrow();
  });
});

describe('ensureWorkspace', () => {
  it('creates the workspace folder and its parents, and is idempotent', async () => {
    const dir = await ensureWorkspace(tmp, 's1');
    expect(dir).toBe(path.join(tmp, 'workspaces', 's1'));
    expect(fs.statSync(dir).isDirectory()).toBe(true);
    await expect(ensureWorkspace(tmp, 's1')).resolves.toBe(dir);
  });
});
