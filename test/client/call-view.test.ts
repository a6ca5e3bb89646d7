import { describe, expect, it } from 'vitest';
import { argLine, callView, INLINE_MAX } from '../../machine/call-view';

describe('callView', () => {
  it('puts a short command beside the tool and lists every other argument, none left out', () => {
    const v = callView({ command: 'uptime', host: 'prod-db-1', env: { LD_PRELOAD: '/tmp/evil.so' } });
    expect(v.headline).toBe('uptime');
    expect(v.args.map((a) => `${a.name}: ${a.text}`)).toEqual(['host: "prod-db-1"', 'env: {"LD_PRELOAD":"/tmp/evil.so"}']);
  });

  it('escapes names and values, so a bidi override or an escape sequence cannot hide or reorder an argument', () => {
    const v = callView({ command: 'echo safe \u202e #; touch PWNED', ['ho\u200bst']: 'a\u001b[2Kb' });
    expect(v.headline).toBe('echo safe \\u202e #; touch PWNED');
    expect(v.args).toEqual([{ name: 'ho\\u200bst', text: '"a\\u001b[2Kb"', clipped: false }]);
  });

  it('cuts a long value, saying its size and the command that prints it whole', () => {
    const content = 'x'.repeat(5000);
    const v = callView({ path: 'big.txt', content });
    const line = argLine(v.args[1]!, 's-1', 't1-s1-c0');
    expect(line).toMatch(/^content: "x{100,}… {2}\(5000 characters; in full: harness show s-1 t1-s1-c0\)$/);
    expect(line.length).toBeLessThan(INLINE_MAX);
  });

  it('shows a value stored by reference by its size and first characters, with the same command', () => {
    const v = callView({ path: 'big.txt', content: { $blob: 'ab12', bytes: 5000, preview: 'first line' } });
    expect(argLine(v.args[1]!, 's-1', 't1-s1-c0')).toBe('content: "first line"…  (5000 bytes; in full: harness show s-1 t1-s1-c0)');
  });

  it('puts a long command among the arguments, cut like any other', () => {
    const v = callView({ command: `echo ${'y'.repeat(INLINE_MAX)}` });
    expect(v.headline).toBeUndefined();
    expect(v.args[0]).toMatchObject({ name: 'command', clipped: true, size: `${INLINE_MAX + 5} characters` });
  });
});
