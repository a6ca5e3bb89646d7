/**
 * canonicalJson is the one sorted-key JSON: approval digests and the repeat guard hash it (stored
 * histories hold those digests), and MCP connections are keyed by it (specKey, tested with the
 * pool). It replaced a second serialiser, activities/mcp/pool.ts's stableJson, kept here frozen as
 * it was. Each sample's text is written out as canonicalJson gave it before the two became one:
 * the one left must give those very bytes, and so must the frozen one.
 */
import { describe, expect, it } from 'vitest';
import { callDigest, canonicalJson } from '../../deterministic/digest';

/** activities/mcp/pool.ts's stableJson as it was. */
function poolStable(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(poolStable).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${JSON.stringify(k)}:${poolStable(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** A value and its canonical text. */
const SAMPLE: [unknown, string][] = [
  [null, 'null'],
  [true, 'true'],
  [false, 'false'],
  [0, '0'],
  [-1.5e-7, '-1.5e-7'],
  [1e21, '1e+21'],
  [Number.NaN, 'null'],
  ['', '""'],
  ['plain', '"plain"'],
  ['quote " backslash \\ newline \n tab \t', '"quote \\" backslash \\\\ newline \\n tab \\t"'],
  ['héllo 世界 🎉 \u0000 \u2028', '"héllo 世界 🎉 \\u0000 \u2028"'],
  [[], '[]'],
  [{}, '{}'],
  [[1, 'two', null, [3, [4]], { b: 1, a: 2 }], '[1,"two",null,[3,[4]],{"a":2,"b":1}]'],
  [{ b: 1, a: 2, c: { z: [{ y: 1, x: 2 }], m: null } }, '{"a":2,"b":1,"c":{"m":null,"z":[{"x":2,"y":1}]}}'],
  [{ command: 'ls -la', timeout_ms: 5000 }, '{"command":"ls -la","timeout_ms":5000}'],
  [{ path: 'a/b.txt', content: 'x\r\ny', mode: undefined, nested: { deep: { deeper: { deepest: [true] } } } }, '{"content":"x\\r\\ny","nested":{"deep":{"deeper":{"deepest":[true]}}},"path":"a/b.txt"}'],
  [{ Zeta: 1, alpha: 2, _under: 3, '-dash': 4, 'a.b': 5, A: 6, é: 7, 日本: 8, '😀': 9, '': 10 }, '{"":10,"-dash":4,"A":6,"Zeta":1,"_under":3,"a.b":5,"alpha":2,"é":7,"日本":8,"😀":9}'],
  [{ 'a b': 1, ab: 2, a: 3, aa: 4, B: 5, b: 6 }, '{"B":5,"a":3,"a b":1,"aa":4,"ab":2,"b":6}'],
  [{ tool: 'run_shell', args: { command: 'echo "$HOME"', cwd: '.', env: { PATH: '/bin', LANG: 'C' } } }, '{"args":{"command":"echo \\"$HOME\\"","cwd":".","env":{"LANG":"C","PATH":"/bin"}},"tool":"run_shell"}'],
  // The shapes specKey hands it: a stdio server and an http one.
  [{ name: 'files', transport: 'stdio', command: 'node', args: ['server.js', '--root', '/tmp'], env: { TOKEN: 'x', A: '' }, cwd: null }, '{"args":["server.js","--root","/tmp"],"command":"node","cwd":null,"env":{"A":"","TOKEN":"x"},"name":"files","transport":"stdio"}'],
  [{ name: 'web', transport: 'http', url: 'https://mcp.example/mcp', headers: { Authorization: 'Bearer t', 'X-Trace': '1' } }, '{"headers":{"Authorization":"Bearer t","X-Trace":"1"},"name":"web","transport":"http","url":"https://mcp.example/mcp"}'],
  [{ name: 'web', transport: 'http', url: 'https://mcp.example/mcp', headers: undefined }, '{"name":"web","transport":"http","url":"https://mcp.example/mcp"}'],
  [{ date: new Date(0), map: new Map([['k', 1]]), set: new Set([1]) }, '{"date":{},"map":{},"set":{}}'],
];

describe('canonicalJson, the one sorted-key JSON', () => {
  it.each(SAMPLE.map(([value, text], i) => [i, value, text] as const))('sample %i: the same bytes as both serialisers it replaced', (_i, value, text) => {
    expect(canonicalJson(value)).toBe(text);
    expect(poolStable(value)).toBe(text);
  });

  it('gives the digests stored histories hold', () => {
    expect(canonicalJson({ tool: 'run_shell', args: { timeout_ms: 5000, command: 'ls -la' } })).toBe('{"args":{"command":"ls -la","timeout_ms":5000},"tool":"run_shell"}');
    expect(callDigest('run_shell', { timeout_ms: 5000, command: 'ls -la' })).toBe('46b792f81ca9e5c7d0844d9ae5caa292');
  });

  it('where the two differed, keeps the digest form (MCP keys only need equal specs to give equal text)', () => {
    // Integer-like keys: JSON.stringify puts them first in numeric order; the pool sorted them as text.
    expect(canonicalJson({ '10': 1, '9': 2, a: 3 })).toBe('{"9":2,"10":1,"a":3}');
    expect(poolStable({ '10': 1, '9': 2, a: 3 })).toBe('{"10":1,"9":2,"a":3}');
    // An undefined in an array is null, as JSON has it (the pool left it out, an empty place).
    expect(canonicalJson([undefined, 1])).toBe('[null,1]');
    expect(poolStable([undefined, 1])).toBe('[,1]');
  });
});
