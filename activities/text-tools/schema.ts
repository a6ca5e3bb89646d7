/**
 * The JSON schema a text-mode reply is constrained to where the endpoint accepts one
 * (`response_format: json_schema`: llama.cpp's server turns it into a grammar, vLLM and OpenAI
 * decode with it): either tool calls, each naming an offered tool with that tool's arguments, or
 * a final answer. Under the constraint even a very small model writes calls that parse and name
 * real tools. Tool schemas are reduced to what grammar converters handle well (types,
 * properties, required, enums, items, unions); a tool whose schema is too large or too deep is
 * offered with free-form object arguments, and the workflow still validates every call.
 */
import type { ToolSpec } from '../../deterministic/types';
import { orderForModel } from './render';

/** Calls one constrained reply may make: enough for real work, a bound on a looping small model. */
const MAX_CONSTRAINED_CALLS = 4;
/** A tool schema past this (as JSON) is replaced by a free-form object: grammars grow with schemas. */
const MAX_TOOL_SCHEMA_CHARS = 4_000;
const MAX_DEPTH = 6;

/** The envelope's schema for these tools. */
export function envelopeSchema(tools: readonly ToolSpec[]): Record<string, unknown> {
  const calls = orderForModel(tools).map((t) => ({
    type: 'object',
    properties: { name: { type: 'string', const: t.name }, arguments: toolArguments(t.parameters) },
    required: ['name', 'arguments'],
    additionalProperties: false,
  }));
  const answer = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
  if (!calls.length) return answer;
  return {
    anyOf: [
      {
        type: 'object',
        properties: { tool_calls: { type: 'array', minItems: 1, maxItems: MAX_CONSTRAINED_CALLS, items: calls.length === 1 ? calls[0] : { anyOf: calls } } },
        required: ['tool_calls'],
        additionalProperties: false,
      },
      answer,
    ],
  };
}

/** `response_format` for the envelope, as OpenAI-compatible servers take it. */
export function envelopeFormat(tools: readonly ToolSpec[]): Record<string, unknown> {
  return { type: 'json_schema', json_schema: { name: 'reply', strict: false, schema: envelopeSchema(tools) } };
}

function toolArguments(parameters: Record<string, unknown>): Record<string, unknown> {
  const reduced = reduce(parameters, 0);
  if (!reduced || JSON.stringify(reduced).length > MAX_TOOL_SCHEMA_CHARS) return { type: 'object' };
  return reduced.type === 'object' ? reduced : { type: 'object' };
}

/** A schema reduced to the keywords grammar converters share; undefined when it cannot be. */
function reduce(s: unknown, depth: number): Record<string, unknown> | undefined {
  if (!s || typeof s !== 'object' || Array.isArray(s) || depth > MAX_DEPTH) return undefined;
  const src = s as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  if (Array.isArray(src.enum) && src.enum.every((v) => ['string', 'number', 'boolean'].includes(typeof v))) return { enum: src.enum };
  if ('const' in src) return { const: src.const };
  const union = (src.anyOf ?? src.oneOf) as unknown;
  if (Array.isArray(union)) {
    const parts = union.map((u) => reduce(u, depth + 1));
    return parts.every(Boolean) ? { anyOf: parts } : {};
  }
  const type = src.type;
  if (typeof type === 'string' && ['string', 'number', 'integer', 'boolean', 'null', 'object', 'array'].includes(type)) out.type = type;
  else if (Array.isArray(type)) return { anyOf: type.filter((t) => typeof t === 'string').map((t) => ({ type: t })) };
  if (out.type === 'object') {
    const props = (src.properties ?? {}) as Record<string, unknown>;
    const kept: Record<string, unknown> = {};
    for (const [name, p] of Object.entries(props)) kept[name] = reduce(p, depth + 1) ?? {};
    out.properties = kept;
    const required = Array.isArray(src.required) ? src.required.filter((r): r is string => typeof r === 'string' && r in kept) : [];
    if (required.length) out.required = required;
    // Unknown keys are refused by the tool's own validation anyway; closing the object keeps a small model from inventing them.
    if (Object.keys(kept).length) out.additionalProperties = false;
  }
  if (out.type === 'array') {
    const items = reduce(src.items, depth + 1);
    if (items) out.items = items;
  }
  return out;
}
