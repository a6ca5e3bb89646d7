/**
 * Structured output from the library's side: a zod object schema (defineAgent's and send's
 * `output`) becomes the JSON schema a session records (deterministic/output.ts checks answers
 * against it in the workflow). Done once, where the schema is given, so a schema that cannot be
 * used is refused there in one line, before anything runs.
 */
import { z } from 'zod';
import { outputSchemaProblem, type OutputSpec } from '../deterministic/output';

/** The type of `result.output` for an output schema (what the validated object is). */
export type OutputOf<S> = S extends z.ZodType ? z.output<S> : unknown;

/** The JSON schema a session records for a zod object schema, or the problem with it (one line, naming `field`). */
export function outputSpecOf(schema: unknown, field = 'output'): OutputSpec | { problem: string } {
  if (typeof schema === 'object' && schema !== null && '_def' in schema && !('_zod' in schema)) {
    return { problem: `${field} is a zod 3 schema, and the harness needs zod 4: install zod@4 and build the schema with its z.object` };
  }
  if (!(schema instanceof z.ZodObject)) return { problem: `${field} must be a zod object schema (z.object({ ... }))` };
  let json: Record<string, unknown>;
  try {
    // The output side: what the validated object is (defaults required, transforms refused).
    json = z.toJSONSchema(schema, { io: 'output' }) as Record<string, unknown>;
  } catch (err) {
    return { problem: `${field} cannot be expressed as JSON schema (${(err as Error).message}); use JSON types (strings, numbers, booleans, arrays, objects) without transforms` };
  }
  delete json.$schema;
  const problem = outputSchemaProblem(json);
  return problem ? { problem: `${field}: ${problem}` } : { schema: json };
}
