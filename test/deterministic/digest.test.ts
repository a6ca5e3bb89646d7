import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { callDigest, canonicalJson, sha256Hex } from '../../deterministic/digest';

describe('sha256Hex', () => {
  // Lone surrogates are U+FFFD, as Node's encoder makes them (the store hashes on the worker).
  const lone = ['\ud800', 'a\udc00b', '😀\ud83d', '\udbff\udbff\udfff', `${'€'.repeat(18)}\ud800`];
  it.each(['', 'abc', 'a'.repeat(55), 'a'.repeat(56), 'a'.repeat(64), 'é'.repeat(60), 'héllo 世界 🎉', 'x'.repeat(100_000), ...lone])(
    'matches node:crypto for a %#th input',
    (text) => {
      expect(sha256Hex(text)).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
    },
  );
});

describe('callDigest', () => {
  it('ignores key order but not values or the tool', () => {
    const a = callDigest('run_shell', { command: 'ls', timeout_ms: 5 });
    expect(callDigest('run_shell', { timeout_ms: 5, command: 'ls' })).toBe(a);
    expect(callDigest('run_shell', { command: 'ls ', timeout_ms: 5 })).not.toBe(a);
    expect(callDigest('write_file', { command: 'ls', timeout_ms: 5 })).not.toBe(a);
  });

  it('sorts keys at every level', () => {
    expect(canonicalJson({ b: { d: 1, c: [{ f: 1, e: 2 }] }, a: 0 })).toBe('{"a":0,"b":{"c":[{"e":2,"f":1}],"d":1}}');
  });
});
