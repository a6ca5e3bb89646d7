/**
 * Structured output: a session whose config has `output` must end its turns with a JSON object
 * that satisfies the output's JSON schema (derived from a zod object by defineAgent or the
 * client). The model is told the shape in the system prompt (fixed for the session, so the
 * prompt's prefix stays the same from call to call); its final answer (the reply's text read as
 * JSON, or what `finish` was given: the object itself where finish takes it, as
 * deterministic/finish-output.ts says, else its answer text) is validated here, in the workflow,
 * against a zod schema rebuilt from the recorded JSON schema, deterministically, as MCP and
 * custom tools' arguments are. An answer that does not match is sent back with what is wrong, a
 * bounded number of times; past that the turn fails with OUTPUT_INVALID. Pure.
 */
import { z } from 'zod';

/** The structured output a session's turns give: the JSON schema of an object. */
export interface OutputSpec {
  /** JSON schema (draft 2020-12, as zod's toJSONSchema writes it) of an object; at most MAX_OUTPUT_SCHEMA_CHARS as JSON. */
  schema: Record<string, unknown>;
}

/** The error type of a turn whose final answer never matched the output schema. */
export const OUTPUT_INVALID = 'OUTPUT_INVALID';

/** The schema is in every session's config and every model call's system prompt: kept small. */
const MAX_OUTPUT_SCHEMA_CHARS = 16 * 1024;

/** How many times an answer that does not match is sent back before the turn fails (limits.outputRetries). */
export const DEFAULT_OUTPUT_RETRIES = 2;

/** Answers longer than this are not read as JSON (a reply is bounded by maxOutputTokens anyway). */
const MAX_OUTPUT_ANSWER_CHARS = 256 * 1024;

/** Problems named when an answer is sent back, and how long each may be. */
const MAX_PROBLEMS = 8;
const MAX_PROBLEM_CHARS = 200;

/** Why a value cannot be a session's output schema (not an object schema, too big, not rebuildable), or undefined. */
export function outputSchemaProblem(schema: unknown): string | undefined {
  const built = validatorOf(schema);
  return 'problem' in built ? built.problem : undefined;
}

/** The zod schema rebuilt from a session's output schema, or why it cannot be. */
function validatorOf(schema: unknown): { validator: z.ZodType } | { problem: string } {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return { problem: 'the schema must be a JSON schema object' };
  const chars = JSON.stringify(schema).length;
  if (chars > MAX_OUTPUT_SCHEMA_CHARS) return { problem: `the schema is larger than ${MAX_OUTPUT_SCHEMA_CHARS / 1024} KiB as JSON schema (${chars} characters)` };
  const notObject = { problem: 'the schema must describe an object (z.object({ ... }))' };
  if ((schema as Record<string, unknown>).type !== 'object') return notObject;
  try {
    const validator = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
    return validator instanceof z.ZodObject ? { validator } : notObject;
  } catch (err) {
    return { problem: `the schema cannot be checked (${oneLine((err as Error).message)})` };
  }
}

/** What a turn checks answers with: built once per run of a turn from the session's output. */
export interface OutputCheck {
  /** The session's system prompt with the shape of the answer added. */
  prompt(systemPrompt: string): string;
  /** The answer (text to read as JSON, or the value finish was given) as the validated object, or what is wrong with it (one line). */
  check(answer: unknown): { ok: true; value: unknown } | { ok: false; problem: string };
  /** How many answers may be sent back before the turn fails. */
  retries: number;
}

/**
 * The check of a session's output, or why the session's output cannot be used (a hand-written
 * config). `finishTakesObject`: finish's arguments are the answer object (the prompt says so).
 */
export function outputCheck(spec: OutputSpec, retries: number | undefined, finishTakesObject = false): OutputCheck | { problem: string } {
  const built = validatorOf(spec?.schema);
  if ('problem' in built) return built;
  const { validator } = built;
  const instruction = outputInstruction(spec.schema, finishTakesObject);
  return {
    retries: retries ?? DEFAULT_OUTPUT_RETRIES,
    prompt: (systemPrompt) => `${systemPrompt.trim()}\n\n${instruction}`,
    check(answer) {
      const parsed = typeof answer === 'string' ? parseAnswer(answer) : { ok: true as const, value: answer };
      if (!parsed.ok) return parsed;
      const result = validator.safeParse(parsed.value);
      if (result.success) return { ok: true, value: result.data };
      return { ok: false, problem: describeIssues(result.error.issues) };
    },
  };
}

/** What the system prompt says of the answer's shape. */
function outputInstruction(schema: Record<string, unknown>, finishTakesObject: boolean): string {
  const { $schema: _drop, ...rest } = schema;
  const given = finishTakesObject ? 'the arguments you give `finish`' : 'the answer you give `finish`';
  return [
    '## Final answer format',
    `Your final answer (the reply that ends your turn, or ${given}) must be a single JSON object that satisfies this JSON schema, and nothing else: no other text, no code fence.`,
    JSON.stringify(rest),
  ].join('\n');
}

/** What the model reads when its answer did not match: what is wrong, and to answer again. */
export function outputRetryNote(problem: string, attempt: number, allowed: number): string {
  return (
    `[harness] Your final answer was not accepted (attempt ${attempt} of ${allowed}): ${problem}. ` +
    'Reply again with only the corrected JSON object, matching the JSON schema under "Final answer format" in the system message.'
  );
}

/** The turn's error when no answer matched. */
export function outputFailure(problem: string, attempts: number): string {
  return `the final answer did not match the output schema after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${problem}`;
}

/** The answer's JSON value: the whole text, a fenced block in it, or the object it holds. */
function parseAnswer(answer: string): { ok: true; value: unknown } | { ok: false; problem: string } {
  const text = answer.trim();
  if (text === '') return { ok: false, problem: 'the answer was empty; it must be a JSON object' };
  if (text.length > MAX_OUTPUT_ANSWER_CHARS) return { ok: false, problem: `the answer is ${text.length} characters, more than the ${MAX_OUTPUT_ANSWER_CHARS} read as JSON` };
  const fenced = /```[a-zA-Z]*\s*\n?([\s\S]*?)```/.exec(text)?.[1]?.trim();
  const first = text.indexOf('{');
  const last = text.lastIndexOf('}');
  const braced = first >= 0 && last > first ? text.slice(first, last + 1) : undefined;
  for (const candidate of [text, fenced, braced]) {
    if (candidate === undefined) continue;
    try {
      return { ok: true, value: JSON.parse(candidate) as unknown };
    } catch {
      // the next candidate
    }
  }
  return { ok: false, problem: 'the answer is not valid JSON; it must be a JSON object' };
}

/** Zod's issues as `path: message; …`, bounded. */
function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  const parts = issues.slice(0, MAX_PROBLEMS).map((i) => {
    const at = i.path.length ? i.path.map(String).join('.') : '(root)';
    return clip(`${at}: ${oneLine(i.message)}`, MAX_PROBLEM_CHARS);
  });
  const more = issues.length > MAX_PROBLEMS ? `; and ${issues.length - MAX_PROBLEMS} more` : '';
  return `${parts.join('; ')}${more}`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
