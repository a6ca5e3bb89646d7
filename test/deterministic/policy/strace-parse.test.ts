// The policy tracer's readers (fuzz/policy/strace.ts, snapshot.ts) on real strace 6.1 output:
// a misread trace would hide exactly what the differential test looks for.
import { describe, expect, it } from 'vitest';
import { diffSnapshots, parseSnapshot } from '../../../fuzz/policy/snapshot';
import { parseStrace, unescape } from '../../../fuzz/policy/strace';

// How every trace starts: env -i looking bash up in PATH, then the command's own bash.
const PRELUDE = [
  '213   execve("/usr/bin/env", ["env", "-i", "PATH=/usr/bin", "bash", "--noprofile", "--norc", "-c", "x"], 0x7fff260ce8b8 /* 8 vars */) = 0',
  '213   execve("/usr/local/sbin/bash", ["bash", "--noprofile", "--norc", "-c", "x"], 0x55fbfd4f0e10 /* 4 vars */) = -1 ENOENT (No such file or directory)',
  '213   execve("/usr/bin/bash", ["bash", "--noprofile", "--norc", "-c", "x"], 0x55fbfd4f0e10 /* 4 vars */) = 0',
  '213   openat(AT_FDCWD</workspace>, "/dev/tty", O_RDWR|O_NONBLOCK) = -1 ENXIO (No such device or address)',
];

/** The trace with the prelude's /dev/tty open (bash's own; judge.ts counts it as a sink) left out. */
function trace(...lines: string[]) {
  const t = parseStrace([...PRELUDE, ...lines, ''].join('\n'));
  expect(t.writes[0]?.paths).toEqual(['/dev/tty']);
  return { ...t, writes: t.writes.slice(1) };
}

describe('parseStrace', () => {
  it('leaves out the tracer\'s own execs and reads argv with escapes', () => {
    const t = trace('12    execve("/usr/bin/mv", ["mv", "q<r", "\\303\\251 s", "a\\"b\\\\c\\n"], 0x560f51c707e0 /* 8 vars */) = 0');
    expect(t.execs).toEqual([{ pid: 12, path: '/usr/bin/mv', argv: ['mv', 'q<r', 'é s', 'a"b\\c\n'], ok: true, result: '0' }]);
    expect(t.unparsed).toEqual([]);
  });

  it('joins unfinished and resumed halves per pid, and keeps calls that never resumed', () => {
    const t = trace(
      '14    openat(AT_FDCWD</tmp/d>, "out, ) = 1", O_WRONLY|O_CREAT|O_TRUNC, 0666 <unfinished ...>',
      '13    execve("/usr/bin/ls", ["ls"], 0x560f51c707e0 /* 8 vars */ <unfinished ...>',
      '14    <... openat resumed>)             = 3</tmp/d/out, ) = 1>',
      '13    <... execve resumed>)             = 0',
      '15    execve("/usr/bin/cat", ["cat"], 0x1 /* 8 vars */ <detached ...>',
      '16    ???( <detached ...>',
      '17    <... ??? resumed>)                = ?',
      '18    ???()                             = ?',
    );
    expect(t.execs.map((e) => [e.pid, e.path, e.ok])).toEqual([[13, '/usr/bin/ls', true], [15, '/usr/bin/cat', false]]);
    expect(t.writes).toEqual([{ pid: 14, syscall: 'openat', paths: ['/tmp/d/out, ) = 1'], ok: true, result: '3</tmp/d/out, ) = 1>' }]);
    expect(t.unparsed).toEqual([]);
  });

  it('resolves paths against the dirfd and reads every write-like call, failed ones too', () => {
    const t = trace(
      '11    openat(AT_FDCWD</tmp>, "a>b", O_RDONLY|O_CLOEXEC) = 3</tmp/a\\76b>',
      '11    openat(AT_FDCWD</tmp>, "x", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</tmp/x>',
      '11    openat(AT_FDCWD</workspace>, "/etc/x", O_WRONLY|O_CREAT|O_TRUNC, 0666) = -1 EROFS (Read-only file system)',
      '12    renameat2(AT_FDCWD</tmp>, "q<r", AT_FDCWD</tmp>, "\\303\\251 s", RENAME_NOREPLACE) = 0',
      '13    ftruncate(3</tmp/\\303\\251 s>, 0)  = 0',
      '14    utimensat(0</tmp/d/x>, NULL, [UTIME_NOW, UTIME_NOW], 0) = 0',
      '15    symlinkat("x", AT_FDCWD</tmp/d>, "y") = 0',
      '16    mknodat(AT_FDCWD</tmp/d>, "ff", S_IFIFO|0666) = 0',
      '17    bind(3<socket:[33335]>, {sa_family=AF_UNIX, sun_path="/tmp/sock"}, 12) = 0',
      '17    bind(3<socket:[33336]>, {sa_family=AF_UNIX, sun_path=@"abstract"}, 12) = 0',
      '18    unlink("/tmp/tacq8KOcJ")          = 0',
      '19    execveat(3</usr/bin/ls>, "", ["ls"], 0x1 /* 4 vars */, AT_EMPTY_PATH) = 0',
    );
    expect(t.writes.map((w) => [w.syscall, w.paths, w.ok])).toEqual([
      ['openat', ['/tmp/x'], true],
      ['openat', ['/etc/x'], false],
      ['renameat2', ['/tmp/q<r', '/tmp/é s'], true],
      ['ftruncate', ['/tmp/é s'], true],
      ['utimensat', ['/tmp/d/x'], true],
      ['symlinkat', ['/tmp/d/y'], true],
      ['mknodat', ['/tmp/d/ff'], true],
      ['bind', ['/tmp/sock'], true],
      ['unlink', ['/tmp/tacq8KOcJ'], true],
    ]);
    expect(t.execs.map((e) => e.path)).toEqual(['/usr/bin/ls']);
    expect(t.unparsed).toEqual([]);
  });

  it('reports lines it cannot read instead of dropping them', () => {
    expect(trace('12    this is not strace').unparsed).toEqual(['12    this is not strace']);
  });

  it('decodes octal and named escapes into UTF-8', () => {
    expect(unescape('\\303\\251\\t\\x41\\"\\\\')).toBe('é\tA"\\');
  });
});

describe('snapshots', () => {
  const nul = (...fields: string[]) => Buffer.from(fields.map((f) => `${f}\0`).join(''));
  const meta = (size: string, mode = '644') =>
    nul('d', '755', '4096', '1.0', '/workspace', '', 'f', mode, size, '1.0', '/workspace/a b\nc', '', 'l', '777', '1', '1.0', '/tmp/l', 'a');
  const sums = (hash: string) => nul(`${hash}  /workspace/a b\nc`);

  it('tell created, deleted and changed files apart, with what changed', () => {
    const before = parseSnapshot(meta('3'), sums('0'.repeat(32)));
    expect(diffSnapshots(before, before)).toEqual([]);
    const after = parseSnapshot(meta('4', '600'), sums('1'.repeat(32)));
    after.set('/workspace/new', { type: 'f', mode: '644', size: '0', mtime: '2.0', link: '' });
    after.delete('/tmp/l');
    expect(diffSnapshots(before, after)).toEqual([
      { kind: 'deleted', path: '/tmp/l' },
      { kind: 'changed', path: '/workspace/a b\nc', what: 'mode 644→600, size 3→4, content' },
      { kind: 'created', path: '/workspace/new' },
    ]);
  });
});
