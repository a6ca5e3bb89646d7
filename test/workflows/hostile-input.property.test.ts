/**
 * Property tests of the pure functions workflow code runs on model output: whatever
 * the model or provider sends, call parsing, argument validation, repeat fingerprints, approval
 * digests and MCP schema preparation return a value (never throw) and stay fast. Arbitrary JSON
 * from fast-check, plus adversarial generators: nesting 100,000 deep, lone surrogates, huge keys.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boundedAnswer, MAX_CALLS_PER_REPLY } from '../../activities/model/reply';
import { builtinRegistry } from '../../deterministic/builtin-tools';
import { sha256Hex } from '../../deterministic/digest';
import { MAX_ARGS_DEPTH, MAX_STEP_VALUES, scanJson } from '../../deterministic/json-bounds';
import { mcpToolDefinition } from '../../deterministic/mcp-tools';
import { preparedSchema } from '../../deterministic/mcp-schema';
import type { McpServerSpec } from '../../deterministic/mcp';
import { ToolRegistry } from '../../deterministic/tools';
import type { ToolCall } from '../../deterministic/types';
import { RepeatGuard } from '../../workflows/turn/repeat-guard';
import { approvalRequest, judgeCall, judgeSafely, judgeStep } from '../../workflows/turn/judge';
import { DEFAULT_POLICY } from '../support/harness';

const builtins = builtinRegistry();
const names = builtins.names();
const deep = (n: number, open: string, close: string) => `${open.repeat(n)}${close.repeat(n)}`;

/** Argument text: arbitrary JSON (objects mostly), arbitrary text, or nesting far past any stack. */
const argumentText = fc.oneof(
  fc.jsonValue({ maxDepth: 8 }).map((v) => JSON.stringify(v)),
  fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue({ maxDepth: 4 })).map((v) => JSON.stringify(v)),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.integer({ min: MAX_ARGS_DEPTH - 2, max: 100_000 }).chain((n) =>
    fc.constantFrom(deep(n, '[', ']'), `{"path":${deep(n, '[', ']')}}`, `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`, `{"url":"http://x","headers":${'{"a":'.repeat(n)}"x"${'}'.repeat(n)}}`),
  ),
);
const call = fc.record({ id: fc.string(), name: fc.oneof(fc.constantFrom(...names, '__proto__', 'constructor', 'toString', 'mcp__x__y'), fc.string({ unit: 'binary' })), arguments: argumentText });

describe('judging calls never throws', () => {
  it('for arbitrary and adversarial calls, bounded, with and without the default policy; approvals digest what was judged', () => {
    fc.assert(
      fc.property(call, (c: ToolCall) => {
        const bare = judgeCall(c, builtins, undefined, [], { bounded: true });
        const j = judgeSafely(c, builtins, DEFAULT_POLICY, [], { bounded: true });
        for (const judged of [bare, j]) {
          if (judged.result) expect(['INVALID_ARGUMENTS', 'UNKNOWN_TOOL', 'PERMISSION_DENIED', 'INVALID_TOOL_CALL']).toContain(judged.result.error_type);
          else expect(approvalRequest(judged).digest).toMatch(/^[0-9a-f]{32}$/);
          expect(() => JSON.stringify(judged)).not.toThrow();
        }
      }),
      { numRuns: 300 },
    );
  });

  it('refuses nesting past the cap before parsing, and accepts it up to the cap', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3 * MAX_ARGS_DEPTH }), (n) => {
        const x = n > 1 ? deep(n - 1, '[', ']') : '0';
        const j = judgeCall({ id: 'c', name: 'read_file', arguments: `{"path":"a","x":${x}}` }, builtins, undefined, [], { bounded: true });
        expect(j.result?.error_type).toBe(n > MAX_ARGS_DEPTH ? 'INVALID_ARGUMENTS' : undefined);
      }),
    );
  });

  it("shares one budget of argument values among a step's calls, in order", () => {
    const values = (n: number) => `{"path":"a","x":[${Array.from({ length: n }, () => '0').join(',')}]}`;
    const half = Math.floor(MAX_STEP_VALUES / 2) - 10;
    const step = [values(half), values(half), values(half), '{"path":"b"}'].map((a, i) => ({ id: `c${i}`, name: 'read_file', arguments: a }));
    expect(judgeStep(step, builtins, DEFAULT_POLICY, [], true).map((j) => j.result?.error_type)).toEqual([undefined, undefined, 'INVALID_ARGUMENTS', undefined]);
    expect(judgeStep(step, builtins, DEFAULT_POLICY, [], false).map((j) => j.result?.error_type)).toEqual([undefined, undefined, undefined, undefined]);
  });

  // Completing at all is what is asserted (the test's ceiling stands for a hang); how long each takes is measured by bench:policy.
  it('completes on the worst a 2 MB reply can hold', () => {
    const MB2 = 2 * 1024 * 1024;
    const keys = `{${Array.from({ length: MB2 / 12 }, (_, i) => `"k${i}":${i}`).join(',')},"path":"a"}`;
    const worst: ToolCall[] = [
      { id: 'a', name: 'read_file', arguments: keys },
      { id: 'b', name: 'http_request', arguments: `{"url":"http://x","headers":${keys}}` },
      { id: 'c', name: 'read_file', arguments: deep(MB2 / 2, '[', ']') },
      { id: 'd', name: 'remember', arguments: `{"key":"k","value":"${'\\ud800'.repeat(MB2 / 6)}"}` },
      { id: 'e', name: 'x'.repeat(MB2), arguments: '{}' },
    ];
    for (const c of worst) {
      new RepeatGuard(3, undefined, true).observe([c]);
      const judged = judgeStep([c], builtins, DEFAULT_POLICY, [], true);
      for (const j of judged) {
        if (!j.result) approvalRequest(j);
        JSON.stringify(j);
      }
      expect(judged, c.id).toHaveLength(1);
    }
  }, 60_000);
});

describe('repeat fingerprints', () => {
  it('never throw, whatever the arguments are (text or not), and stay short when bounded', () => {
    const anyArgs = fc.oneof(argumentText, fc.anything()) as fc.Arbitrary<string>;
    fc.assert(
      fc.property(fc.array(fc.record({ id: fc.string(), name: fc.string(), arguments: anyArgs }), { maxLength: 5 }), (calls) => {
        const guard = new RepeatGuard(3, undefined, true);
        for (let i = 0; i < 4; i++) expect(['ok', 'warn', 'stop']).toContain(guard.observe(calls));
        expect(guard.state().last.length).toBeLessThanOrEqual(300);
      }),
      { numRuns: 200 },
    );
  });

  it('take arguments that String() throws on (found by the property above: an object whose toString is false)', () => {
    const guard = new RepeatGuard(2, undefined, true);
    const calls = [{ id: '', name: '', arguments: { toString: false } as unknown as string }];
    expect(guard.observe(calls)).toBe('ok');
    expect(guard.observe(calls)).toBe('warn');
  });

  it('still see a repetition whatever the key order and spacing', () => {
    const guard = new RepeatGuard(2, undefined, true);
    guard.observe([{ id: '1', name: 'read_file', arguments: `{"path":"a","n":"${'x'.repeat(500)}"}` }]);
    expect(guard.observe([{ id: '2', name: 'read_file', arguments: ` { "n":"${'x'.repeat(500)}", "path" : "a" }` }])).toBe('warn');
  });
});

describe('the nesting scan', () => {
  /** Depth by walking the parsed value (the reference the linear scan must agree with). */
  const depthOf = (v: unknown): number => (v && typeof v === 'object' ? 1 + Math.max(0, ...Object.values(v).map(depthOf)) : 0);
  it('agrees with the depth of the parsed value, brackets inside strings and escapes included', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 12 }), fc.integer({ min: 0, max: 14 }), (v, max) => {
        expect(scanJson(JSON.stringify(v), max).tooDeep).toBe(depthOf(v) > max);
      }),
      { numRuns: 500 },
    );
  });
});

describe('the model activity bounds what it returns', () => {
  it('turns anything a provider sends into text and at most MAX_CALLS_PER_REPLY calls', () => {
    const fn = fc.record({ id: fc.anything(), name: fc.anything(), arguments: fc.anything() }, { requiredKeys: [] });
    fc.assert(
      fc.property(fc.anything(), fc.oneof(fc.anything(), fc.array(fn, { maxLength: 3 * MAX_CALLS_PER_REPLY })), fc.anything(), (content, toolCalls, usage) => {
        const a = boundedAnswer({ content, toolCalls, usage, model: 'm' } as never);
        expect(a.content === null || typeof a.content === 'string').toBe(true);
        expect(a.toolCalls.length).toBeLessThanOrEqual(MAX_CALLS_PER_REPLY);
        for (const c of a.toolCalls) expect([typeof c.id, typeof c.name, typeof c.arguments]).toEqual(['string', 'string', 'string']);
        expect(Object.values(a.usage).every((n) => Number.isFinite(n) && n >= 0)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe('MCP schemas', () => {
  const spec: McpServerSpec = { name: 's', transport: 'stdio', command: 'x', args: [], env: {}, startupTimeoutMs: 1000, callTimeoutMs: 1000 };
  const tool = (inputSchema: Record<string, unknown>) => mcpToolDefinition({ server: 's', tool: 't', name: 'mcp__s__t', description: 'a test tool', inputSchema }, spec, { bounded: true });
  const schema = fc.dictionary(fc.constantFrom('type', 'properties', 'items', 'anyOf', 'allOf', '$ref', 'enum', 'pattern', 'required', '$defs', 'not', 'x'), fc.jsonValue({ maxDepth: 5 }));

  it('become a tool whose validation never throws, for arbitrary schemas and arguments', () => {
    fc.assert(
      fc.property(schema, argumentText, (s, args) => {
        const registry = new ToolRegistry([tool({ type: 'object', ...s })]);
        const j = judgeCall({ id: 'c', name: 'mcp__s__t', arguments: args }, registry, undefined, [], { bounded: true });
        expect(j.result === undefined || j.result.error_type === 'INVALID_ARGUMENTS').toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('that recurse, share anyOf branches or backtrack are checked in bounded time', () => {
    const defs: Record<string, unknown> = { e40: { type: 'string', minLength: 2 } };
    for (let i = 39; i > 0; i--) defs[`e${i}`] = { anyOf: [{ $ref: `#/$defs/e${i + 1}` }, { $ref: `#/$defs/e${i + 1}` }] };
    const schemas: Array<[Record<string, unknown>, string]> = [
      [{ type: 'object', properties: { a: { $ref: '#/$defs/e1' } }, $defs: defs }, '{"a":"x"}'],
      [{ type: 'object', properties: { a: { $ref: '#/$defs/x' } }, $defs: { x: { $ref: '#/$defs/y' }, y: { $ref: '#/$defs/x' } } }, '{"a":1}'],
      [{ type: 'object', properties: { w: { type: 'string', pattern: '^(a+)+$' } } }, `{"w":"${'a'.repeat(40)}!"}`],
      [{ type: 'object', properties: { a: { anyOf: Array.from({ length: 300 }, (_, i) => ({ type: 'array', items: { type: 'number', minimum: i } })) } } }, `{"a":[${'1000,'.repeat(300_000)}"x"]}`],
    ];
    for (const [s, args] of schemas) {
      const registry = new ToolRegistry([tool(s)]);
      expect(judgeCall({ id: 'c', name: 'mcp__s__t', arguments: args }, registry, undefined, [], { bounded: true })).toBeDefined();
    }
    expect(preparedSchema({ type: 'object', properties: { pattern: { type: 'string', pattern: 'x' } } })?.schema).toEqual({ type: 'object', properties: { pattern: { type: 'string' } } });
  }, 60_000);
});

describe('sha256Hex', () => {
  it('matches node:crypto for any string, lone surrogates included (the store hashes the same text on the worker)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => {
        expect(sha256Hex(text)).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
      }),
      { numRuns: 300 },
    );
  });
});
