/**
 * Eval suite files: `evals/*.jsonl`, one case per line (blank lines and `//` comment lines are
 * skipped). Each line is validated with zod; a problem is reported as `<file>:<line>: <field>:
 * <what>`, and the seed shorthands (`prompt`, `expected_contains`, `expected_error_types`) are
 * turned into the full form. A suite file is input like any other: sizes are bounded.
 */
import { readFileSync, statSync } from 'node:fs';
import { z } from 'zod';
import { FAILURE_REASONS, type EvalCase, type EvalCheck } from '../../deterministic/eval';
import { ERROR_TYPES } from '../../deterministic/errors';
import { JsonSyntaxError, parseJsonText } from '../../deterministic/json-text';
import { ScriptSchema } from '../../scripted-model/script';
import { isRe2 } from '../../deterministic/policy/patterns';
import { UsageError } from '../../machine/errors';
import { parseTurnId } from '../../deterministic/turn-id';

/** Largest suite file read (a suite is text: a few MB is thousands of cases). */
const MAX_SUITE_BYTES = 8 * 1024 * 1024;

const CASE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const isNamedTurn = (id: string) => SESSION_ID.test(parseTurnId(id, { strict: true })?.sessionId ?? '');
const text = z.string().min(1, 'must be non-empty text');
const errorType = z.enum(ERROR_TYPES, { error: `expected one of ${ERROR_TYPES.join(', ')}` });
const INSIDE = 'must be a path inside the workspace (relative, no "..")';
const inside = (p: string) => p.length > 0 && p.length <= 255 && !p.startsWith('/') && !p.split('/').includes('..') && !p.includes('\0');
const relPath = z.string().refine(inside, INSIDE);
// Keys of a record lose their message in zod's own error: each bad key is named here.
const fixturesSchema = z.record(z.string(), z.string().max(1024 * 1024)).superRefine((files, ctx) => {
  for (const key of Object.keys(files)) if (!inside(key)) ctx.addIssue({ code: 'custom', path: [key], message: INSIDE });
});

const CheckSchema = z.discriminatedUnion(
  'type',
  [
    z.strictObject({ type: z.enum(['contains', 'not_contains']), value: text }),
    // Matched with RE2 (linear time): no lookaround or backreferences.
    z.strictObject({ type: z.literal('regex'), value: text.refine(isRe2, 'is not a valid RE2 regular expression (no lookaround or backreferences)') }),
    z.strictObject({ type: z.literal('terminated_by'), value: z.enum(['final_answer', 'finish', 'max_steps', 'error_limit', 'repeated_action', 'failed', 'cancelled', 'budget_exceeded']) }),
    z.strictObject({ type: z.enum(['tool_called', 'tool_not_called']), name: text }),
    z.strictObject({ type: z.enum(['error_type_seen', 'error_type_not_seen']), value: errorType }),
    z.strictObject({ type: z.literal('approval_requested'), name: text.optional() }),
    z.strictObject({ type: z.literal('file_exists'), path: relPath }),
    z.strictObject({ type: z.literal('file_contains'), path: relPath, value: text }),
    z.strictObject({ type: z.literal('max_steps'), value: z.number().int().positive() }),
    z.strictObject({ type: z.literal('compressed'), value: z.boolean().optional() }),
  ],
  { error: 'expected a check: contains, not_contains, regex, terminated_by, tool_called, tool_not_called, error_type_seen, error_type_not_seen, approval_requested, file_exists, file_contains, max_steps or compressed' },
);

const ApprovalsSchema = z.union(
  [
    z.enum(['approve', 'deny']),
    z.array(z.strictObject({ tool: text, approve: z.boolean(), args_contain: text.optional() })).max(100),
  ],
  { error: 'expected "approve", "deny" or a list of {tool, approve, args_contain?}' },
);

const CaseSchema = z
  .strictObject({
    id: z.string().regex(CASE_ID, 'use letters, digits, ".", "_" or "-" (at most 64, starting with a letter or digit)'),
    input: text.max(256 * 1024).optional(),
    prompt: text.max(256 * 1024).optional(),
    fixtures: fixturesSchema.optional(),
    answers: z.array(z.string()).max(100).optional(),
    approvals: ApprovalsSchema.optional(),
    max_steps: z.number().int().positive().max(1000).optional(),
    context_window: z.number().int().min(4000).max(2_000_000).optional(),
    model_script: ScriptSchema.optional(),
    checks: z.array(CheckSchema).max(100).optional(),
    expected_contains: z.union([text, z.array(text)]).optional(),
    expected_error_types: z.array(errorType).optional(),
    trials: z.number().int().positive().max(100).optional(),
    from: z.strictObject({ turn: z.string().refine(isNamedTurn, 'expected a turn id <session>/turn-N'), step: z.number().int().positive() }).optional(),
    expect: z.enum(['pass', 'fail']).optional(),
    expect_reason: z.enum(FAILURE_REASONS).optional(),
    tags: z.array(z.string()).optional(),
    description: z.string().optional(),
  })
  .refine((c) => (c.input ?? c.prompt) !== undefined || c.from !== undefined, { message: 'a case needs "input" (or "prompt"), or "from"' })
  .refine((c) => !(c.input !== undefined && c.prompt !== undefined), { message: 'give "input" or "prompt", not both' });

/** A parsed suite. */
export interface Suite {
  file: string;
  cases: EvalCase[];
}

/** Reads and validates a suite file; the first problem is a UsageError naming its line and field. */
export function loadSuite(file: string): Suite {
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    throw new UsageError(`cannot read ${file}`, 'name a suite file, e.g. evals/smoke.jsonl');
  }
  if (size > MAX_SUITE_BYTES) throw new UsageError(`${file} is ${size} bytes; a suite is at most ${MAX_SUITE_BYTES / 1024 / 1024} MB`, 'split it into several suites');
  return parseSuite(readFileSync(file, 'utf8'), file);
}

/** Validates suite text (JSON Lines); `file` names it in errors. */
export function parseSuite(source: string, file: string): Suite {
  const cases: EvalCase[] = [];
  const seen = new Map<string, number>();
  const lines = source.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.trim();
    if (raw === '' || raw.startsWith('//')) continue;
    const line = i + 1;
    let value: unknown;
    try {
      value = parseJsonText(raw);
    } catch (err) {
      if (!(err instanceof JsonSyntaxError)) throw err;
      // The column counts from the line's first non-blank character; the text itself is never quoted.
      const column = err.column + (lines[i]!.length - lines[i]!.trimStart().length);
      throw new UsageError(`${file}:${line}: invalid JSON at column ${column} (${err.what})`, 'each line of a suite is one JSON object (a case)');
    }
    const r = CaseSchema.safeParse(value);
    if (!r.success) {
      const [first, ...rest] = r.error.issues;
      const where = first!.path.length ? `${first!.path.map(String).join('.')}: ` : '';
      const more = rest.length ? ` (and ${rest.length} more problem${rest.length > 1 ? 's' : ''})` : '';
      throw new UsageError(`${file}:${line}: ${where}${first!.message.replace(/^Invalid input: /, '')}${more}`, 'see docs/evals.md for the case format');
    }
    const c = r.data;
    const dup = seen.get(c.id);
    if (dup) throw new UsageError(`${file}:${line}: id: "${c.id}" is already the id of line ${dup}`, 'give every case its own id');
    seen.set(c.id, line);
    cases.push(toCase(c, line));
  }
  if (!cases.length) throw new UsageError(`${file} holds no cases`, 'write one JSON object per line');
  return { file, cases };
}

/** The full form of a case: shorthands turned into checks, defaults filled in. */
function toCase(c: z.infer<typeof CaseSchema>, line: number): EvalCase {
  const checks: EvalCheck[] = [...(c.checks ?? [])];
  const contains = typeof c.expected_contains === 'string' ? [c.expected_contains] : (c.expected_contains ?? []);
  for (const value of contains) checks.push({ type: 'contains', value });
  for (const value of c.expected_error_types ?? []) checks.push({ type: 'error_type_seen', value });
  return {
    id: c.id,
    input: c.input ?? c.prompt ?? '',
    fixtures: c.fixtures ?? {},
    answers: c.answers ?? [],
    // Evals never wait for a human: without a decision, every call that asks is denied.
    approvals: c.approvals ?? 'deny',
    ...(c.max_steps ? { max_steps: c.max_steps } : {}),
    ...(c.context_window ? { context_window: c.context_window } : {}),
    ...(c.model_script ? { model_script: c.model_script } : {}),
    checks,
    ...(c.trials ? { trials: c.trials } : {}),
    ...(c.from ? { from: c.from } : {}),
    ...(c.expect ? { expect: c.expect } : {}),
    ...(c.expect_reason ? { expect_reason: c.expect_reason } : {}),
    line,
  };
}
