import { describe, expect, it } from 'vitest';
import { escapeForTerminal } from '../../cli/escape';

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
  });

  it('keeps newlines only when asked, and leaves ordinary text (including CJK and emoji) alone', () => {
    expect(escapeForTerminal('one\ntwo')).toBe('one\\ntwo');
    expect(escapeForTerminal('one\ntwo', { keepNewlines: true })).toBe('one\ntwo');
    expect(escapeForTerminal('写一首诗 🎉 café')).toBe('写一首诗 🎉 café');
  });
});
