import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureWorkspace, sessionWorkspace, WorkspaceError, workspaceParts } from '../../../activities/tools/workspace';

let tmp: string;

beforeEach(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ws-test-')));
});

afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

function rejection(userPath: string): WorkspaceError {
  let err: unknown;
  try {
    workspaceParts(userPath);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(WorkspaceError);
  return err as WorkspaceError;
}

describe('workspaceParts', () => {
  it('splits a plain relative path into its components', () => {
    expect(workspaceParts('a/b.txt')).toEqual(['a', 'b.txt']);
  });

  it('gives no components for the root itself', () => {
    expect(workspaceParts('.')).toEqual([]);
    expect(workspaceParts('./')).toEqual([]);
  });

  it('settles .. that stays inside the root and drops empty and . components', () => {
    expect(workspaceParts('a/../b.txt')).toEqual(['b.txt']);
    expect(workspaceParts('a//./b/')).toEqual(['a', 'b']);
  });

  it.each(['../../etc/passwd', 'a/../../x', '..', '../root-other/x'])('rejects %s as outside the workspace, naming the path', (p) => {
    const err = rejection(p);
    expect(err.errorType).toBe('PATH_OUTSIDE_WORKSPACE');
    expect(err.message).toContain(JSON.stringify(p));
  });

  it('rejects an absolute path', () => {
    const err = rejection('/etc/passwd');
    expect(err.errorType).toBe('PATH_OUTSIDE_WORKSPACE');
    expect(err.message).toContain('/etc/passwd');
  });

  it('rejects a path containing a NUL byte as invalid arguments', () => {
    expect(rejection('a\0b').errorType).toBe('INVALID_ARGUMENTS');
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
