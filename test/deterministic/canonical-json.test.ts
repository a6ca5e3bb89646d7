/**
 * canonicalJson is the one sorted-key JSON: approval digests and the repeat guard hash it (stored
 * histories hold those digests), and MCP connections are keyed by it (specKey, tested with the
 * pool). It replaced a second serialiser (activities/mcp/pool.ts's stableJson): both are kept
 * here as they were, frozen, and the one left must give their very bytes.
 */
import { describe, expect, it } from 'vitest';
import { callDigest, canonicalJson } from '../../deterministic/digest';

/** deterministic/digest.ts's canonicalJson as it was. */
function digestCanonical(value: unknown): string {
  const sortKeys = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sortKeys);
    if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      return Object.fromEntries(
        Object.keys(o)
          .sort()
          .map((k) => [k, sortKeys(o[k])]),
      );
    }
    return v;
  };
  return JSON.stringify(sortKeys(value));
}

/** activities/mcp/pool.ts's stableJson as it was. */
function poolStable(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(poolStable).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${JSON.stringify(k)}:${poolStable(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const SAMPLE: unknown[] = [
  null,
  true,
  false,
  0,
  -1.5e-7,
  1e21,
  Number.NaN,
  '',
  'plain',
  'quote " backslash \\ newline \n tab \t',
  'héllo 世界 🎉 \u0000 \u2028',
  [],
  {},
  [1, 'two', null, [3, [4]], { b: 1, a: 2 }],
  { b: 1, a: 2, c: { z: [{ y: 1, x: 2 }], m: null } },
  { command: 'ls -la', timeout_ms: 5000 },
  { path: 'a/b.txt', content: 'x\r\ny', mode: undefined, nested: { deep: { deeper: { deepest: [true] } } } },
  { Zeta: 1, alpha: 2, _under: 3, '-dash': 4, 'a.b': 5, A: 6, é: 7, '日本': 8, '😀': 9, '': 10 },
  { 'a b': 1, ab: 2, a: 3, aa: 4, B: 5, b: 6 },
  { tool: 'run_shell', args: { command: 'echo "$HOME"', cwd: '.', env: { PATH: '/bin', LANG: 'C' } } },
  // The shapes specKey hands it: a stdio server and an http one.
  { name: 'files', transport: 'stdio', command: 'node', args: ['server.js', '--root', '/tmp'], env: { TOKEN: 'x', A: '' }, cwd: null },
  { name: 'web', transport: 'http', url: 'https://mcp.example/mcp', headers: { Authorization: 'Bearer t', 'X-Trace': '1' } },
  { name: 'web', transport: 'http', url: 'https://mcp.example/mcp', headers: undefined },
  { date: new Date(0), map: new Map([['k', 1]]), set: new Set([1]) },
];

describe('canonicalJson, the one sorted-key JSON', () => {
  it.each(SAMPLE.map((v, i) => [i, v]))('sample %i: the same bytes as both serialisers it replaced', (_i, value) => {
    expect(canonicalJson(value)).toBe(digestCanonical(value));
    expect(canonicalJson(value)).toBe(poolStable(value));
  });

  it('gives the digests stored histories hold', () => {
    expect(canonicalJson({ tool: 'run_shell', args: { timeout_ms: 5000, command: 'ls -la' } })).toBe('{"args":{"command":"ls -la","timeout_ms":5000},"tool":"run_shell"}');
    expect(callDigest('run_shell', { timeout_ms: 5000, command: 'ls -la' })).toBe('46b792f81ca9e5c7d0844d9ae5caa292');
  });

  it('where the two differed, keeps the digest form (MCP keys only need equal specs to give equal text)', () => {
    // Integer-like keys: JSON.stringify puts them first in numeric order; the pool sorted them as text.
    const numeric = { '10': 1, '9': 2, a: 3 };
    expect(canonicalJson(numeric)).toBe(digestCanonical(numeric));
    expect(canonicalJson(numeric)).toBe('{"9":2,"10":1,"a":3}');
    // A hole in an array is null, as JSON has it (the pool wrote the word undefined).
    expect(canonicalJson([undefined])).toBe(digestCanonical([undefined]));
    expect(canonicalJson([undefined])).toBe('[null]');
  });
});
