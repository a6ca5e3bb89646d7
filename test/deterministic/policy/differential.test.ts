// Differential test of the permission policy against reality: every generated command the
// default policy allows is run for real in the sandbox image under strace, and must exec only
// programs the policy found and write no file (fuzz/policy/). Against the real Docker Engine: no
// skips. Without Docker or the trace image this test fails (`npm run setup` builds the image).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Decision } from '../../../deterministic/policy/decide';
import { SANDBOX_ENV, TRACE_SCRATCH } from '../../../fuzz/policy/container';
import { compare, formatDisagreement, signature } from '../../../fuzz/policy/judge';
import { runDifferential } from '../../../fuzz/policy/run';
import { Tracer } from '../../../fuzz/policy/tracer';
import { figure } from '../../support/figures';

const SEED = 20_251_201;
const COUNT = 2_000;
// The run must prove something: at least this many commands allowed and traced (15 %).
const MIN_ALLOWED = 300;

let tracer: Tracer;

beforeAll(async () => {
  tracer = await Tracer.start();
}, 120_000);

afterAll(async () => {
  await tracer?.stop();
});

/** A claim as the policy makes it, to check the comparison itself. */
const allow = (...programs: string[]): Decision => ({ decision: 'allow', rule: 'test', reason: 'test', programs });

describe('the tracer (a broken one could make the differential test pass)', () => {
  it('sees the programs a command runs and the files it writes, changes or deletes', async () => {
    const [touch, python, sedLabel, redirect, find, ls] = await tracer.trace([
      'touch x', 'python3 -c 1', "sed -n ':x w out.txt' f", 'echo a > f', "find . -name '*.tmp' -delete", 'ls -la',
    ]);
    expect(touch!.execs.map((e) => [e.path, e.argv])).toEqual([['/usr/bin/touch', ['touch', 'x']]]);
    expect(touch!.writes).toContainEqual(expect.objectContaining({ syscall: 'utimensat', paths: ['/workspace/x'], ok: true }));
    expect(touch!.changes).toEqual([{ kind: 'changed', path: '/workspace/x', what: 'mtime' }]);
    expect(python!.execs.map((e) => e.path)).toEqual(['/usr/bin/python3']);
    expect(sedLabel!.writes).toContainEqual(expect.objectContaining({ syscall: 'openat', paths: ['/workspace/out.txt'], ok: true }));
    expect(sedLabel!.changes).toContainEqual({ kind: 'created', path: '/workspace/out.txt' });
    // A builtin's redirection: no exec at all, but the open and the new content.
    expect(redirect!.execs).toEqual([]);
    expect(redirect!.writes).toContainEqual(expect.objectContaining({ syscall: 'openat', paths: ['/workspace/f'] }));
    expect(redirect!.changes).toContainEqual(expect.objectContaining({ kind: 'changed', path: '/workspace/f' }));
    expect(find!.changes).toContainEqual({ kind: 'deleted', path: '/workspace/old.tmp' });

    // The comparison flags each of them against a claim that misses it, and passes ls -la.
    expect(compare(allow('python3'), touch!)?.unseen.map((e) => e.path)).toEqual(['/usr/bin/touch']);
    expect(compare(allow('touch'), touch!)?.changes).toHaveLength(1);
    expect(compare(allow('echo'), python!)?.unseen).toHaveLength(1);
    expect(compare(allow('sed'), sedLabel!)?.writes).toHaveLength(1);
    expect(compare(allow('echo'), redirect!)).toBeDefined();
    expect(compare(allow('find'), find!)).toBeDefined();
    expect(compare(allow('ls'), ls!)).toBeUndefined();
    for (const r of [touch, python, sedLabel, redirect, find, ls]) expect(r!.unparsed).toEqual([]);
  });

  it('sees write attempts that fail, temporary files, programs run by programs, and restores the workspace', async () => {
    const [readOnly, tac, inner, removed, after, left] = await tracer.trace([
      'echo x > /etc/x', 'cat a.txt | tac', "sh -c 'cat a.txt' | nice wc -l", 'rm a.txt sub/c.txt', 'cat a.txt sub/c.txt',
      'echo left > "$TMPDIR/left"',
    ]);
    expect(readOnly!.writes).toContainEqual(expect.objectContaining({ paths: ['/etc/x'], ok: false }));
    expect(readOnly!.changes).toEqual([]);
    // tac copies a pipe to a temporary file in its TMPDIR and removes it: the writes are seen.
    expect(tac!.writes.map((w) => w.syscall)).toEqual(expect.arrayContaining(['openat', 'unlink']));
    const tacFiles = tac!.writes.flatMap((w) => w.paths).filter((p) => p.startsWith('/tmp/'));
    expect(tacFiles.length).toBeGreaterThan(0);
    expect(tacFiles.every((p) => p.startsWith(`${TRACE_SCRATCH}/`))).toBe(true);
    // What a command leaves in its scratch folder is removed after it, as the sandbox does.
    expect(left!.writes.flatMap((w) => w.paths).filter((p) => p !== '/dev/tty')).toEqual([`${TRACE_SCRATCH}/left`]);
    expect(left!.changes).toEqual([]);
    expect(inner!.execs.filter((e) => e.ok).map((e) => e.path).sort()).toEqual(['/usr/bin/cat', '/usr/bin/nice', '/usr/bin/sh', '/usr/bin/wc']);
    expect(removed!.changes.filter((c) => c.kind === 'deleted').map((c) => c.path)).toEqual(['/workspace/a.txt', '/workspace/sub/c.txt']);
    expect(after!.exitCode).toBe(0);
    expect(after!.stdout).toContain('foo');
  });

  it('runs commands as the sandbox does: bash --noprofile --norc -c, only its environment, uid 1000, no network', async () => {
    const [env, who, net] = await tracer.trace([
      'env', 'id -u; echo "$0 $BASH_VERSION"; shopt -q expand_aliases || echo no-aliases; cat /proc/self/status | grep ^CapEff',
      "python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 53), 1)' 2>&1 | tail -n 1",
    ]);
    // bash adds PWD, SHLVL and `_` itself.
    const lines = env!.stdout.trim().split('\n').filter((l) => !/^(PWD|SHLVL|_)=/.test(l));
    expect(lines.sort()).toEqual([...SANDBOX_ENV, `TMPDIR=${TRACE_SCRATCH}`].sort());
    expect(who!.stdout).toMatch(/^1000\nbash 5\.\d+[^\n]*\nno-aliases\nCapEff:\s+0+\n$/);
    expect(net!.stdout).toMatch(/unreachable|Network/i);
  });

  it('reports a command that kills the driver, and goes on with the next', async () => {
    const [killer, next] = await tracer.trace(['kill -9 -1', 'echo still here']);
    expect(killer!.lost).toBe(true);
    expect(compare(allow(), killer!)?.lost).toBe(true);
    expect(next!.stdout).toBe('still here\n');
  });
});

describe('the default policy against reality', () => {
  it('allows only commands that run no program it did not see and write no file', async () => {
    const s = await runDifferential({ seed: SEED, count: COUNT, tracer });
    figure('policy-differential', 
      `differential: ${s.generated} generated, ${s.allowed} allowed (traced at ${s.perTracedMs.toFixed(1)} ms each), ` +
        `${s.asked} asked, ${s.denied} denied, ${s.disagreements.length} disagreements`,
    );
    expect(s.allowed).toBeGreaterThanOrEqual(MIN_ALLOWED);
    const groups = new Map<string, string[]>();
    for (const d of s.disagreements) groups.set(signature(d), [...(groups.get(signature(d)) ?? []), formatDisagreement(d)]);
    const report = [...groups].map(([key, list]) => `${list.length} × ${key}\n${list.slice(0, 3).join('\n\n')}`).join('\n\n');
    if (report) console.error(report);
    expect(s.disagreements.length, report).toBe(0);
  }, 300_000);
});
