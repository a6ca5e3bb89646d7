import { describe, expect, it, vi } from 'vitest';
import { escapeForTerminal, escapeJsonForTerminal } from '../../machine/terminal/escape';
import { escapingLogger } from '../../machine/terminal/temporal-log';
import { Control, plainString, styled, terminalString } from '../../machine/terminal/text';
import { everyInvisible, everyInvisibleShown, INVISIBLE } from '../support/invisible-characters';

/** Every C1 control, U+0080–U+009F (U+009B is CSI, U+009D OSC to a terminal that reads 8-bit controls). */
const C1 = Array.from({ length: 32 }, (_, i) => String.fromCharCode(0x80 + i)).join('');
/** Characters a terminal must never receive from text we did not write. */
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/u;

describe('escapeForTerminal', () => {
  it('shows ANSI escape sequences instead of letting them recolour or move the cursor', () => {
    expect(escapeForTerminal('ls \u001b[2K\u001b[1Grm -rf .')).toBe('ls \\e[2K\\e[1Grm -rf .');
  });

  it('shows carriage returns, so a line cannot be overwritten with a harmless-looking one', () => {
    expect(escapeForTerminal('rm -rf ~\rls       ')).toBe('rm -rf ~\\rls       ');
  });

  it('shows other C0 and C1 controls, DEL and bidirectional overrides', () => {
    expect(escapeForTerminal('a\u0007b\u0008c\u007fd\u009be')).toBe('a\\x07b\\x08c\\x7fd\\x9be');
    expect(escapeForTerminal('echo \u202eexe.txt')).toBe('echo \\u202eexe.txt');
    expect(escapeForTerminal('x\u200by\ufeffz\u2066w')).toBe('x\\u200by\\ufeffz\\u2066w');
    expect(escapeForTerminal(C1)).not.toMatch(RAW_CONTROL);
  });

  it('defuses OSC sequences: window title, clipboard (52) and links (8)', () => {
    const osc = '\u001b]0;title\u0007\u001b]52;c;cHduZWQ=\u0007\u001b]8;;https://evil.example\u001b\\link\u001b]8;;\u001b\\\u009d0;t\u009c';
    expect(escapeForTerminal(osc)).toBe('\\e]0;title\\x07\\e]52;c;cHduZWQ=\\x07\\e]8;;https://evil.example\\e\\link\\e]8;;\\e\\\\x9d0;t\\x9c');
  });

  it('keeps newlines and tabs only when asked, and leaves ordinary text (including CJK and emoji) alone', () => {
    expect(escapeForTerminal('one\ntwo')).toBe('one\\ntwo');
    expect(escapeForTerminal('one\ntwo', { keepNewlines: true })).toBe('one\ntwo');
    expect(escapeForTerminal('a\tb')).toBe('a\\tb');
    expect(escapeForTerminal('a\tb\r\n', { keepNewlines: true, keepTabs: true })).toBe('a\tb\\r\n');
    expect(escapeForTerminal('写一首诗 🎉 café')).toBe('写一首诗 🎉 café');
  });

  it.each(INVISIBLE.map((c) => [c.what, c] as const))('shows %s as an escape, never raw (the table the console is checked against too)', (_what, c) => {
    expect(escapeForTerminal(`a${c.char}b`)).toBe(`a${c.shown}b`);
    expect(escapeJsonForTerminal(JSON.stringify(`a${c.char}b`))).not.toContain(c.char);
    expect(JSON.parse(escapeJsonForTerminal(JSON.stringify(`a${c.char}b`)))).toBe(`a${c.char}b`);
  });

  it('shows every character of the table in one line, each where it stood', () => {
    expect(escapeForTerminal(everyInvisible())).toBe(everyInvisibleShown());
  });

  it('leaves emoji with their presentation selector and joiner-free text as they are', () => {
    expect(escapeForTerminal('\u2764\ufe0f ok \u263a\ufe0e')).toBe('\u2764\ufe0f ok \u263a\ufe0e');
  });

  it('is idempotent: escaping escaped text changes nothing (a line escaped early is safe to write)', () => {
    const once = escapeForTerminal(`\u001b[2J${C1}\u202e`);
    expect(escapeForTerminal(once)).toBe(once);
  });
});

describe('escapeJsonForTerminal', () => {
  it('escapes what JSON.stringify leaves raw (C1, DEL, bidi, zero-width, separators) and parses back to the same value', () => {
    const value = { answer: `A${C1}\u007f\u202e\u2066\u200b\u2028\ufeff\u001b[2J\u0007Z`, list: ['\u009b31m', 'ok'], n: 1 };
    const json = escapeJsonForTerminal(JSON.stringify(value, null, 2));
    expect(json).not.toMatch(RAW_CONTROL);
    expect(json).toContain('\\u009b');
    expect(JSON.parse(json)).toEqual(value);
  });

  it('leaves ordinary JSON as JSON.stringify wrote it', () => {
    const json = JSON.stringify({ a: 'café 写 🎉', b: [1, 2] }, null, 2);
    expect(escapeJsonForTerminal(json)).toBe(json);
  });
});

describe('terminal Text', () => {
  it('escapes every string piece (keeping newlines and tabs) and writes only our own Controls raw', () => {
    const text = [styled('red', 'error:'), ' ', `bad\u001b]0;x\u0007\tcol\nnext\u009b`, Control.carriageReturn];
    expect(terminalString(text)).toBe('\u001b[31merror:\u001b[0m bad\\e]0;x\\x07\tcol\nnext\\x9b\r');
    expect(plainString(text)).toBe('error: bad\\e]0;x\\x07\tcol\nnext\\x9b');
  });

  it('a string that looks like a Control is still escaped: only Control values pass raw', () => {
    expect(terminalString(['\u001b[31m', '\r'])).toBe('\\e[31m\\r');
  });

  it('refuses to be pasted into a template literal, which would lose the difference', () => {
    expect(() => `${Control.bold as unknown as string}`).toThrow(/not interpolated/);
  });
});

describe('escapingLogger', () => {
  it("writes Temporal's log lines (an activity failure quoting a model's reply) escaped, stack lines kept", () => {
    const written: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (written.push(String(chunk)), true));
    try {
      escapingLogger('WARN').warn('Activity failed', { error: new Error(`HTTP 400: \u001b]0;title\u0007${C1}`) });
      escapingLogger('WARN').info('not at this level');
    } finally {
      spy.mockRestore();
    }
    expect(written).toHaveLength(1);
    expect(written[0]).toMatch(/\[WARN\] Activity failed [\s\S]*HTTP 400: \\e\]0;title\\x07\\x80/);
    expect(written[0]).toMatch(/\n\s+at /);
    expect(written[0]).not.toMatch(RAW_CONTROL);
  });
});
