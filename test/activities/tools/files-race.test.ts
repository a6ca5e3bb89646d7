/**
 * The sandbox keeps background processes between commands, so while a file tool runs, a
 * process there may be swapping a folder for a symlink as fast as it can. These tests run
 * such a process against read_file, write_file and list_files and count the outcomes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listFiles, readFile, writeFile } from '../../../activities/tools/files';

const ATTEMPTS = 3000;
const SECRET = 'TOP-SECRET-FROM-OUTSIDE';

// Swaps <ws>/dir between a real folder (<ws>/.real) and a symlink (<ws>/.link -> ../outside)
// until <stop> exists, then prints how many times `dir` changed. A folder a tool created at
// `dir` meanwhile is removed so that the swapping goes on.
const SWAPPER = `
const fs = require('fs');
const [ws, stop] = process.argv.slice(1);
const dir = ws + '/dir';
let swaps = 0;
function put(from) {
  for (;;) {
    try { fs.renameSync(from, dir); swaps++; return; } catch {}
    try { fs.rmSync(dir, { recursive: true, force: true }); } catch {}
  }
}
process.stdout.write('ready\\n');
for (let i = 0; ; i++) {
  put(ws + '/.link');
  fs.renameSync(dir, ws + '/.link');
  put(ws + '/.real');
  fs.renameSync(dir, ws + '/.real');
  if (i % 32 === 0 && fs.existsSync(stop)) break;
}
process.stdout.write(swaps + '\\n');
`;

let tmp: string;
let root: string;
let outside: string;
let swapper: ChildProcess | undefined;

beforeEach(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'files-race-')));
  root = path.join(tmp, 'ws');
  outside = path.join(tmp, 'outside');
  fs.mkdirSync(path.join(root, '.real'), { recursive: true });
  fs.writeFileSync(path.join(root, '.real/secret.txt'), 'inside');
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, 'secret.txt'), SECRET);
  fs.symlinkSync('../outside', path.join(root, '.link'));
});

afterEach(() => {
  swapper?.kill('SIGKILL');
  swapper = undefined;
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** Starts the swapper; resolves once it swaps, with a function that stops it and returns its swap count. */
async function startSwapping(): Promise<() => Promise<number>> {
  const stop = path.join(tmp, 'stop');
  const child = spawn(process.execPath, ['-e', SWAPPER, root, stop], { stdio: ['ignore', 'pipe', 'inherit'] });
  swapper = child;
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', () => out.includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`swapper exited early (${code})`)));
  });
  return async () => {
    fs.writeFileSync(stop, '');
    const code = child.exitCode ?? (await new Promise<number | null>((resolve) => child.once('exit', resolve)));
    expect(code).toBe(0);
    return Number(out.split('\n')[1]);
  };
}

describe('file tools against a folder swapped for a symlink to the outside', () => {
  it('read_file never returns the file behind the symlink', async () => {
    const stop = await startSwapping();
    const outcomes = new Map<string, number>();
    for (let i = 0; i < ATTEMPTS; i++) {
      const r = await readFile(root, { path: 'dir/secret.txt' });
      expect(JSON.stringify(r)).not.toContain(SECRET);
      // Other errors keep their message, so that a failure says what went wrong.
      const key = r.ok ? `ok:${(r.result as { content: string }).content}` : r.error_type === 'EXECUTION_ERROR' ? `${r.message}` : `${r.error_type}`;
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    }
    const swaps = await stop();
    expect(swaps).toBeGreaterThan(0);
    // Both states were met by the tool itself: reads of the real folder and refusals of the link.
    expect(outcomes.get('ok:inside')).toBeGreaterThan(0);
    expect(outcomes.get('PATH_OUTSIDE_WORKSPACE')).toBeGreaterThan(0);
    // Anything else would be a misleading error caused by the race itself.
    for (const key of outcomes.keys()) expect(['ok:inside', 'PATH_OUTSIDE_WORKSPACE', 'FILE_NOT_FOUND']).toContain(key);
  });

  it('write_file never writes through the symlink', async () => {
    const stop = await startSwapping();
    let written = 0;
    let refused = 0;
    for (let i = 0; i < ATTEMPTS; i++) {
      const r = await writeFile(root, { path: 'dir/secret.txt', content: `written ${i}`, append: i % 2 === 1 });
      if (r.ok) written++;
      else if (r.error_type === 'PATH_OUTSIDE_WORKSPACE') refused++;
    }
    const swaps = await stop();
    expect(swaps).toBeGreaterThan(0);
    expect(written).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
    expect(fs.readdirSync(outside)).toEqual(['secret.txt']);
    expect(fs.readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe(SECRET);
  });

  it('list_files never lists the folder behind the symlink', async () => {
    fs.writeFileSync(path.join(outside, 'only-outside.txt'), 'x');
    const stop = await startSwapping();
    for (let i = 0; i < ATTEMPTS / 3; i++) {
      const r = await listFiles(root, { path: 'dir', recursive: true });
      expect(JSON.stringify(r)).not.toContain('only-outside');
    }
    expect(await stop()).toBeGreaterThan(0);
  });
});
