/**
 * Structured output without a server: a zod object schema becomes the JSON schema a session
 * records (anything else is refused in one line), the workflow's check rebuilt from it reads a
 * final answer as JSON (fenced or not) and names what is wrong by path, the system prompt states
 * the shape, and an agent's output is the only one its sessions may name.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApplicationFailure } from '@temporalio/common';
import { defineAgent } from '../../api/define-agent';
import { outputSpecOf } from '../../api/output';
import { resolveAgent } from '../../activities/agents';
import { WorkerDeclarations } from '../../activities/declarations';
import { resolveSessionConfig } from '../../config/resolve';
import { DEFAULT_OUTPUT_RETRIES, outputCheck, outputSchemaProblem, type OutputCheck, type OutputSpec } from '../../deterministic/output';

const Order = z.object({
  id: z.string().regex(/^A-\d+$/),
  total: z.number().int().min(0),
  status: z.enum(['open', 'shipped']),
  tags: z.array(z.string()).max(3).optional(),
});

const specOf = (schema: unknown): OutputSpec => {
  const spec = outputSpecOf(schema);
  if ('problem' in spec) throw new Error(spec.problem);
  return spec;
};
const checkOf = (spec: OutputSpec, retries?: number): OutputCheck => {
  const check = outputCheck(spec, retries);
  if ('problem' in check) throw new Error(check.problem);
  return check;
};

describe('an output schema', () => {
  it("is the zod object's JSON schema (its output side), without $schema", () => {
    const spec = specOf(Order);
    expect(spec.schema).toMatchObject({ type: 'object', required: ['id', 'total', 'status'], additionalProperties: false });
    expect(spec.schema.$schema).toBeUndefined();
    expect(outputSchemaProblem(spec.schema)).toBeUndefined();
  });

  it.each([
    ['a plain JSON schema', { type: 'object' }, 'output must be a zod object schema (z.object({ ... }))'],
    ['a string schema', z.string(), 'output must be a zod object schema (z.object({ ... }))'],
    ['a zod 3 schema', { _def: { typeName: 'ZodObject' } }, 'output is a zod 3 schema, and the harness needs zod 4: install zod@4 and build the schema with its z.object'],
  ])('refuses %s in one line', (_what, schema, message) => {
    expect(outputSpecOf(schema)).toEqual({ problem: message });
  });

  it('is refused by the workflow when a hand-written config carries one it cannot use', () => {
    expect(outputCheck({ schema: { type: 'string' } }, undefined)).toEqual({ problem: 'the schema must describe an object (z.object({ ... }))' });
    expect(outputCheck({ schema: 'x' as unknown as Record<string, unknown> }, undefined)).toEqual({ problem: 'the schema must be a JSON schema object' });
    const big = { type: 'object', description: 'x'.repeat(20_000) };
    expect(outputSchemaProblem(big)).toMatch(/^the schema is larger than 16 KiB as JSON schema \(\d+ characters\)$/);
  });
});

describe('the check of a final answer', () => {
  const check = checkOf(specOf(Order));

  it('reads the object from the answer: bare, fenced or after a sentence', () => {
    const order = { id: 'A-7', total: 12, status: 'open' };
    for (const answer of [JSON.stringify(order), `\`\`\`json\n${JSON.stringify(order, null, 2)}\n\`\`\``, `Here it is: ${JSON.stringify(order)}`]) {
      expect(check.check(answer)).toEqual({ ok: true, value: order });
    }
  });

  it('names each problem by its path, in one line', () => {
    const r = check.check(JSON.stringify({ id: 'B-7', total: 1.5, status: 'lost', tags: ['a', 'b', 'c', 'd'], extra: 1 }));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problem).not.toContain('\n');
    for (const part of ['id: Invalid string: must match pattern', 'total: ', 'status: Invalid option', 'tags: Too big', '(root): Unrecognized key: "extra"']) expect(r.problem).toContain(part);
  });

  it('refuses what is not JSON, and an empty answer', () => {
    expect(check.check('The order is open.')).toEqual({ ok: false, problem: 'the answer is not valid JSON; it must be a JSON object' });
    expect(check.check('  ')).toEqual({ ok: false, problem: 'the answer was empty; it must be a JSON object' });
    expect(check.check('[1, 2]')).toMatchObject({ ok: false, problem: expect.stringMatching(/^\(root\): /) });
  });

  it('states the shape after the system prompt, the same for every call', () => {
    const prompt = check.prompt('You read orders.\n');
    expect(prompt.startsWith('You read orders.\n\n## Final answer format\n')).toBe(true);
    expect(prompt).toContain(JSON.stringify(specOf(Order).schema));
    expect(check.prompt('You read orders.\n')).toBe(prompt);
  });

  it('allows limits.outputRetries answers to be sent back (2 by default)', () => {
    expect(check.retries).toBe(DEFAULT_OUTPUT_RETRIES);
    expect(checkOf(specOf(Order), 0).retries).toBe(0);
  });
});

describe("an agent's output", () => {
  const clerk = defineAgent({ name: 'clerk', instructions: 'You read orders.', model: 'gpt-4o-mini', output: Order });
  const declared = () => new WorkerDeclarations({ agents: [clerk.spec] });
  const request = () => resolveSessionConfig({ agent: 'clerk' }, {}, process.cwd());

  it('is recorded in its spec and given to its sessions', () => {
    expect(clerk.spec.output).toEqual(specOf(Order));
    expect(clerk.output).toBe(Order);
    expect(resolveAgent(request(), declared()).output).toEqual(specOf(Order));
  });

  it('may be named by its session, and no other', () => {
    expect(resolveAgent({ ...request(), output: specOf(Order) }, declared()).output).toEqual(specOf(Order));
    let err: unknown;
    try {
      resolveAgent({ ...request(), output: specOf(z.object({ id: z.string() })) }, declared());
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: 'AGENT_MISMATCH', message: `agent "clerk": output: the session's output schema is not the agent's` });
  });
});
