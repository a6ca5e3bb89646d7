/**
 * Structured output through `finish`, without a server: the finish a session with an output
 * schema is offered has the output's JSON schema as its parameters (native tool calling, the
 * text protocol's rendering and its constrained envelope alike), the model activity gets that
 * schema with the call or by its hash from the store, the workflow takes any object as finish's
 * arguments and judges it with the output check, and a model writing finish the old way
 * (`{"answer": "<JSON>"}`) is still read.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { outputSpecOf } from '../../api/output';
import { createToolSpecs } from '../../activities/tool-specs';
import type { Conversations } from '../../activities/store/conversations';
import { envelopeSchema } from '../../activities/text-tools/schema';
import { textModeMessages } from '../../activities/text-tools/render';
import type { ModelCallInput } from '../../deterministic/activity-types';
import { builtinRegistry } from '../../deterministic/builtin-tools';
import { sha256Hex } from '../../deterministic/digest';
import { finishAnswerOf, OutputSchemaOffer, outputFinishSpec, outputFinishTool } from '../../deterministic/finish-output';
import { outputCheck, type OutputCheck, type OutputSpec } from '../../deterministic/output';
import { judgeCall } from '../../workflows/turn/judge';
import { outputEnd, withOutputFinish } from '../../workflows/turn/output';
import type { LoopState } from '../../workflows/turn/state';

const Order = z.object({ id: z.string().regex(/^A-\d+$/), total: z.number().min(0), status: z.enum(['open', 'shipped']) });
const spec = outputSpecOf(Order) as OutputSpec;
const valid = { id: 'A-7', total: 12.5, status: 'shipped' };
const check = outputCheck(spec, 0, true) as OutputCheck;
const specs = builtinRegistry().specs();
const call = (name: string, args: unknown) => ({ id: 'c1', name, arguments: JSON.stringify(args) });

/** A message store that holds texts by hash, counting its writes. */
function fakeStore() {
  const texts = new Map<string, string>();
  const puts: string[] = [];
  const conversations = {
    putText: async (_session: string, text: string) => {
      puts.push(text);
      texts.set(sha256Hex(text), text);
      return sha256Hex(text);
    },
    getText: async (_session: string, hash: string) => texts.get(hash) ?? Promise.reject(new Error(`no ${hash}`)),
  } as unknown as Conversations;
  return { conversations, puts };
}

describe('the finish a session with an output schema is offered', () => {
  it("has the output's JSON schema as its parameters", () => {
    const base = specs.find((s) => s.name === 'finish')!;
    const finish = outputFinishSpec(base, spec.schema);
    expect(finish.parameters).toEqual(spec.schema);
    expect(finish.description).toContain('The arguments are the answer itself');
    expect([finish.name, finish.risk]).toEqual(['finish', 'read_only']);
  });

  it('is what a model call offers, with the schema given on the first call and named by hash after', async () => {
    const { conversations, puts } = fakeStore();
    const toolSpecs = createToolSpecs(specs, conversations);
    const offer = new OutputSchemaOffer(spec.schema, true);
    const input = (): ModelCallInput => ({
      sessionId: 's',
      turnId: 's/turn-1',
      step: 1,
      callIndex: 0,
      model: { provider: 'openai', model: 'm' },
      conversation: { head: null, pending: [] },
      tools: ['read_file', 'finish'],
      outputSchema: offer.ref(),
    });
    const first = input();
    expect(first.outputSchema).toEqual({ hash: sha256Hex(JSON.stringify(spec.schema)), text: JSON.stringify(spec.schema) });
    expect((await toolSpecs(first)).find((s) => s.name === 'finish')!.parameters).toEqual(spec.schema);
    expect(puts).toEqual([JSON.stringify(spec.schema)]);
    offer.delivered();
    const later = input();
    expect(later.outputSchema).toEqual({ hash: sha256Hex(JSON.stringify(spec.schema)) });
    expect((await toolSpecs(later)).find((s) => s.name === 'finish')!.parameters).toEqual(spec.schema);
    // Without one, finish takes its answer text, as every session without structured output.
    const plain = await toolSpecs({ ...later, outputSchema: undefined });
    expect(plain.find((s) => s.name === 'finish')!.parameters).toMatchObject({ properties: { answer: { type: 'string' } }, required: ['answer'] });
    // Without the store the text goes with every call.
    const inline = new OutputSchemaOffer(spec.schema, false);
    inline.delivered();
    expect(inline.ref().text).toBe(JSON.stringify(spec.schema));
  });

  it('is rendered with the same schema in text tool-calling mode', () => {
    const finish = outputFinishSpec(specs.find((s) => s.name === 'finish')!, spec.schema);
    const tools = [specs.find((s) => s.name === 'read_file')!, finish];
    const system = textModeMessages([{ role: 'system', content: 'You read orders.' }], tools)[0]!.content;
    expect(system).toContain('- finish(id: string, total: number, status: "open" | "shipped") — End the turn with your final answer.');
    // Where the endpoint decodes with a schema, finish's arguments are the output's fields.
    const envelope = JSON.stringify(envelopeSchema(tools));
    expect(envelope).toContain(JSON.stringify({ name: { type: 'string', const: 'finish' }, arguments: { type: 'object', properties: { id: { type: 'string' }, total: { type: 'number' }, status: { enum: ['open', 'shipped'] } }, required: ['id', 'total', 'status'], additionalProperties: false } }));
  });
});

describe('a finish call in such a session', () => {
  const opts = withOutputFinish({}, spec.schema);

  it('takes any object as arguments in the workflow (the output check judges them)', () => {
    expect(opts.registry!.get('finish')!.description).toContain('The arguments are the answer itself');
    expect(opts.registry!.names()).toEqual(builtinRegistry().names());
    const judged = judgeCall(call('finish', { ...valid, status: 'lost' }), opts.registry!, undefined, []);
    expect(judged.result).toBeUndefined();
    expect(judged.args).toEqual({ ...valid, status: 'lost' });
    // The built-in finish refuses an object: the registry of a session without the patch.
    expect(judgeCall(call('finish', { answer: valid }), builtinRegistry(), undefined, []).result?.error_type).toBe('INVALID_ARGUMENTS');
    expect(outputFinishTool().parameters.safeParse({}).success).toBe(true);
  });

  it('answers with its arguments, or with the answer text of a model that writes finish the old way', () => {
    expect(opts.finishAnswer!(valid)).toEqual(valid);
    expect(finishAnswerOf({ answer: JSON.stringify(valid) }, spec.schema)).toBe(JSON.stringify(valid));
    // An output with a field named answer takes the arguments whole.
    const own = outputSpecOf(z.object({ answer: z.string() })) as OutputSpec;
    expect(finishAnswerOf({ answer: 'yes' }, own.schema)).toEqual({ answer: 'yes' });
  });

  it('ends the turn with a matching object, sends a wrong one back, and fails past the retries with it as text', () => {
    expect(check.check(valid)).toEqual({ ok: true, value: valid });
    expect(check.check({ ...valid, total: 'twelve' })).toEqual({ ok: false, problem: 'total: Invalid input: expected number, received string' });
    expect(check.prompt('You read orders.')).toContain('or the arguments you give `finish`) must be a single JSON object');
    const s = { invalidOutputs: 0, conversation: { add: () => undefined } } as unknown as LoopState;
    expect(outputEnd(check, s, 'finish', valid, 1)).toEqual({ terminated_by: 'finish', answer: JSON.stringify(valid), steps: 1, output: valid });
    const failed = outputEnd(check, s, 'finish', { ...valid, status: 'lost' }, 2);
    expect([failed?.terminated_by, failed?.errorType, failed?.answer]).toEqual(['failed', 'OUTPUT_INVALID', JSON.stringify({ ...valid, status: 'lost' })]);
  });
});
