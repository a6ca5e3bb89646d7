/**
 * Structured output through `finish`: in a session with an output schema (turns that took the
 * `finish-output-schema` patch), the `finish` tool offered to the model takes the answer object
 * itself, its parameters being the output's JSON schema, so a model with native tool calling
 * writes the object as the call's arguments (constrained by them where the endpoint decodes
 * with the schema), and text tool-calling mode renders the same schema for it.
 *
 * The parameters are the output schema itself rather than `{ answer: <schema> }`: that is the
 * shape function calling is trained on and every provider accepts (an object of named fields at
 * the top), it saves small models a level of nesting they often get wrong, text mode can list
 * the fields in finish's one-line signature, and the schema's `$ref`s (zod writes root-relative
 * `#/$defs/…` and `#`) stay valid, which they would not under a wrapper.
 *
 * The workflow takes any object as finish's arguments and judges it with the output check
 * (deterministic/output.ts), so an answer that does not match goes back to the model with what
 * is wrong and counts against limits.outputRetries, as a text answer does. Pure.
 */
import { z } from 'zod';
import type { SystemRef } from './conversation';
import { sha256Hex } from './digest';
import { defineTool, type ToolDefinition } from './tools';
import type { ToolSpec } from './types';

/** What the model reads of finish when its arguments are the answer. */
const OUTPUT_FINISH_DESCRIPTION =
  'End the turn with your final answer. Use when the task is complete. The arguments are the answer itself: one object with the fields of the final answer format.';

/** finish as the workflow checks it in such a session: any object (the output check judges it). */
export function outputFinishTool(): ToolDefinition {
  return defineTool({ name: 'finish', description: OUTPUT_FINISH_DESCRIPTION, parameters: z.looseObject({}), risk: 'read_only', runsIn: 'workflow' });
}

/** finish as the model is offered it: the built-in's spec with the output's JSON schema as its parameters. */
export function outputFinishSpec(finish: ToolSpec, schema: Record<string, unknown>): ToolSpec {
  return { ...finish, description: OUTPUT_FINISH_DESCRIPTION, parameters: schema };
}

/**
 * The answer a finish call gives: its arguments, or, from a model that writes finish as it is
 * offered without structured output (`{"answer": "<the object as JSON>"}`), that answer, when
 * the output has no field of that name.
 */
export function finishAnswerOf(args: Record<string, unknown>, schema: Record<string, unknown>): unknown {
  const keys = Object.keys(args);
  const fields = schema.properties && typeof schema.properties === 'object' ? (schema.properties as Record<string, unknown>) : {};
  return keys.length === 1 && keys[0] === 'answer' && !Object.prototype.hasOwnProperty.call(fields, 'answer') ? args.answer : args;
}

/**
 * What a model call carries of the output schema: its hash, and its text while the run has not
 * sent it yet (the model activity stores it then and reads it back by hash): every call carrying
 * the schema whole would put it into history once a step (a local call's marker repeats its request).
 */
export class OutputSchemaOffer {
  private readonly text: string;
  private readonly hash: string;
  private sent = false;

  /** `byRef`: the turn has the message store (without it the text goes every time). */
  constructor(schema: Record<string, unknown>, private readonly byRef: boolean) {
    this.text = JSON.stringify(schema);
    this.hash = sha256Hex(this.text);
  }

  /** The reference the next model call carries. */
  ref(): SystemRef {
    return this.sent && this.byRef ? { hash: this.hash } : { hash: this.hash, text: this.text };
  }

  /** A model call succeeded: its activity stored the text. */
  delivered(): void {
    this.sent = true;
  }
}
