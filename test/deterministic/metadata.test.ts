/**
 * Session metadata's bounds (a plain object of JSON values, at most 16 KiB) and the error types a
 * custom tool may give (UPPER_SNAKE; any other falls back to EXECUTION_ERROR, saying why).
 */
import { describe, expect, it } from 'vitest';
import { MAX_METADATA_BYTES, metadataProblem } from '../../deterministic/metadata';
import { ERROR_TYPES, toolErrorType } from '../../deterministic/errors';

describe('metadataProblem', () => {
  it('takes a plain object of JSON values up to the limit', () => {
    expect(metadataProblem({ userId: 'u-1', tenant: 'acme', n: 3, ok: true, none: null, tags: ['a', { b: [1] }] })).toBeUndefined();
    expect(metadataProblem(Object.assign(Object.create(null) as object, { a: 1 }))).toBeUndefined();
    expect(metadataProblem({})).toBeUndefined();
    // {"x":"…"} is 8 bytes besides the string.
    expect(metadataProblem({ x: 'y'.repeat(MAX_METADATA_BYTES - 8) })).toBeUndefined();
    expect(metadataProblem({ x: 'y'.repeat(MAX_METADATA_BYTES - 7) })).toBe(`metadata is ${MAX_METADATA_BYTES + 1} bytes of JSON; at most 16 KiB is accepted`);
  });

  it('names the first place that is not JSON', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(metadataProblem('u-1')).toBe('metadata must be a plain JSON object (it is a string)');
    expect(metadataProblem(null)).toBe('metadata must be a plain JSON object (it is null)');
    expect(metadataProblem(new Map())).toBe('metadata must be a plain JSON object (it is a Map)');
    expect(metadataProblem({ a: { b: [1, undefined] } })).toBe('metadata.a.b[1] is undefined, which is not JSON');
    expect(metadataProblem({ big: 10n })).toBe('metadata.big is a bigint, which is not JSON');
    expect(metadataProblem({ inf: Infinity })).toBe('metadata.inf is Infinity, which JSON cannot hold');
    expect(metadataProblem(cyclic)).toBe('metadata.self refers back to itself (a cycle is not JSON)');
    let deep: unknown = 1;
    for (let i = 0; i < 100; i++) deep = [deep];
    expect(metadataProblem({ deep })).toMatch(/^metadata\.deep(\[0\])+ nests deeper than 64 levels$/);
  });

  it('takes the same object twice when it is no cycle', () => {
    const shared = { a: 1 };
    expect(metadataProblem({ x: shared, y: [shared, shared] })).toBeUndefined();
  });
});

describe('toolErrorType', () => {
  it("takes the harness's types and an application's own UPPER_SNAKE ones", () => {
    for (const t of ERROR_TYPES) expect(toolErrorType(t)).toEqual({ type: t });
    expect(toolErrorType('PAYMENT_DECLINED')).toEqual({ type: 'PAYMENT_DECLINED' });
    expect(toolErrorType(`E${'X'.repeat(63)}`)).toEqual({ type: `E${'X'.repeat(63)}` });
    expect(toolErrorType(undefined)).toEqual({ type: 'EXECUTION_ERROR' });
  });

  it('falls back to EXECUTION_ERROR, saying why, for anything else', () => {
    for (const bad of ['payment_declined', '1DECLINED', '_X', 'A-B', '', `E${'X'.repeat(64)}`, 42]) {
      const out = toolErrorType(bad);
      expect(out.type).toBe('EXECUTION_ERROR');
      expect(out.problem).toMatch(/^the tool gave the error type .+, which is not UPPER_SNAKE_CASE .*, so it is reported as EXECUTION_ERROR$/);
    }
    expect(toolErrorType(42).problem).toContain('the error type a number,');
  });
});
