/**
 * Tool definitions: defineTool's checks, and the built-ins' parameters built on first read
 * (defineLazyTool), so a workflow that validates no call builds none of their schemas.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BUILTIN_TOOLS, builtinRegistry } from '../../deterministic/builtin-tools';
import { defineLazyTool, defineTool, ToolDefinitionError } from '../../deterministic/tools';

const base = { name: 'probe', description: 'A tool to probe definitions with.', risk: 'read_only' as const };

describe('defineTool', () => {
  it('refuses a bad name, description, risk, timeout, parameters or blob argument, naming the tool', () => {
    const schema = z.object({ n: z.number() });
    expect(() => defineTool({ ...base, name: '9lives', parameters: schema })).toThrow(/tool "9lives": name must match/);
    expect(() => defineTool({ ...base, description: 'short', parameters: schema })).toThrow(/description must say/);
    expect(() => defineTool({ ...base, risk: 'spicy' as never, parameters: schema })).toThrow(/risk must be one of/);
    expect(() => defineTool({ ...base, timeoutMs: 0, parameters: schema })).toThrow(/timeoutMs must be a positive number/);
    expect(() => defineTool({ ...base, parameters: {} as never })).toThrow(/parameters must be a zod object schema/);
    expect(() => defineTool({ ...base, parameters: schema, blobArgs: ['n'] })).toThrow(/blob argument n must be a string parameter/);
  });
});

describe('defineLazyTool', () => {
  it('builds the parameters when first read, once, and checks everything else at once', () => {
    let builds = 0;
    const def = defineLazyTool({ ...base, timeoutMs: 5_000, parameters: () => (builds++, z.object({ text: z.string() })), blobArgs: ['text'] });
    expect(builds).toBe(0);
    expect(def).toMatchObject({ name: 'probe', source: 'local', runsIn: 'activity', timeoutMs: 5_000 });
    expect(def.parameters.safeParse({ text: 'x' }).success).toBe(true);
    expect(def.parameters.safeParse({ text: 1 }).success).toBe(false);
    expect(builds).toBe(1);
    expect(() => defineLazyTool({ ...base, risk: 'spicy' as never, parameters: () => z.object({}) })).toThrow(ToolDefinitionError);
  });

  it('refuses bad parameters when they are first read', () => {
    const def = defineLazyTool({ ...base, parameters: () => z.object({ n: z.number() }), blobArgs: ['n'] });
    expect(() => def.parameters).toThrow(/tool "probe": blob argument n must be a string parameter/);
  });

  it('leaves the built-ins unbuilt until read; each builds and passes the checks defineTool makes', () => {
    const unbuilt = BUILTIN_TOOLS.filter((t) => !Object.getOwnPropertyDescriptor(t, 'parameters')?.get);
    expect(unbuilt.map((t) => t.name)).toEqual([]);
    for (const t of BUILTIN_TOOLS) expect(() => defineTool({ ...t })).not.toThrow();
    expect(builtinRegistry().specs().map((s) => s.name)).toEqual(BUILTIN_TOOLS.map((t) => t.name));
  });
});
