/**
 * The `readOnly` knowledge of the exact analysis: whether one invocation of a program only reads,
 * judged from the tables of this folder. A program without a table is never read-only; an option
 * or word a table does not know makes the invocation "not understood", which the policy treats
 * like a writing one (it asks). Pure and linear: it runs inside the workflow.
 */
import { inspectFind } from './find';
import { inspectGit } from './git';
import { parseOptions } from './getopt';
import { SED, sedScripts } from './sed';
import { sedScriptProblem } from './sed-script';
import type { ProgramSpec } from './spec';
import { PROGRAMS } from './table';

const SPECIAL = new Set(['sed', 'find', 'git']);

/** Whether the exact analysis knows the program's command line (only such programs can be read-only). */
export function knowsProgram(program: string): boolean {
  return SPECIAL.has(program) || Object.hasOwn(PROGRAMS, program);
}

/**
 * Why this invocation is not read-only (it writes, runs or reads file names, or a word is not
 * understood), or undefined when it only reads. `globs` are arguments that expand to file names:
 * for a program with refused options or operands a file named `-o` or a second operand would
 * change what it does, so a glob makes it unsure there.
 */
export function notReadOnlyExact(program: string, args: readonly string[], globs: readonly string[] = []): string | undefined {
  if (!knowsProgram(program)) return `the policy does not know \`${program}\` as read-only`;
  if (program === 'git') return inspectGit(args);
  const problem = globProblem(program, globs);
  if (problem) return problem;
  if (program === 'find') return inspectFind(args).problem;
  if (program === 'sed') return sed(args);
  return inspectTable(program, args, PROGRAMS[program]!);
}

/** The arguments that are patterns or code for the program rather than file names, by index. */
export function codeArgsExact(program: string, args: readonly string[]): Set<number> {
  if (program === 'find') return inspectFind(args).code;
  const spec = program === 'sed' ? SED : Object.hasOwn(PROGRAMS, program) ? PROGRAMS[program]! : undefined;
  if (!spec?.code) return new Set();
  const parsed = parseOptions(program, args, spec);
  if ('unsure' in parsed) return new Set();
  const code = new Set(parsed.options.filter((o) => spec.code!.includes(o.name) && o.at !== undefined).map((o) => o.at!));
  const given = parsed.options.some((o) => spec.codeOperandUnless?.includes(o.name));
  if (spec.codeOperandUnless && !given && parsed.operandAt.length) code.add(parsed.operandAt[0]!);
  return code;
}

/**
 * A glob expands to whatever names exist. Where that matters: for sed any glob (its first
 * operand is the script); for a program with an operand limit any glob (more operands); for a
 * program with refused options a glob that starts with a wildcard, which can expand to `-o…`
 * (a glob with a literal first character, `src/*`, never starts with `-`).
 */
function globProblem(program: string, globs: readonly string[]): string | undefined {
  if (!globs.length) return undefined;
  const spec = Object.hasOwn(PROGRAMS, program) ? PROGRAMS[program]! : undefined;
  if (program === 'sed' || spec?.maxOperands) return `\`${globs[0]}\` can expand to more operands`;
  const refuses = program === 'find' || spec?.refuse !== undefined || spec?.refuseWords !== undefined;
  const wild = globs.find((g) => /^[*?[]/.test(g));
  return refuses && wild !== undefined ? `\`${wild}\` can expand to option names` : undefined;
}

function inspectTable(program: string, args: readonly string[], spec: ProgramSpec): string | undefined {
  if (spec.free) {
    const hit = spec.refuseWords ? args.find((a) => Object.hasOwn(spec.refuseWords!, a)) : undefined;
    return hit === undefined ? undefined : spec.refuseWords![hit];
  }
  const parsed = parseOptions(program, args, spec);
  if ('unsure' in parsed) return parsed.unsure;
  const hit = spec.refuse ? parsed.options.find((o) => Object.hasOwn(spec.refuse!, o.name)) : undefined;
  if (hit) return `\`${hit.name.length === 1 ? '-' : '--'}${hit.name}\` ${spec.refuse![hit.name]}`;
  if (spec.maxOperands && parsed.operands.length > spec.maxOperands.count) return spec.maxOperands.why;
  return undefined;
}

function sed(args: readonly string[]): string | undefined {
  const parsed = parseOptions('sed', args, SED);
  if ('unsure' in parsed) return parsed.unsure;
  const hit = parsed.options.find((o) => Object.hasOwn(SED.refuse!, o.name));
  if (hit) return `\`${hit.name.length === 1 ? '-' : '--'}${hit.name}\` ${SED.refuse![hit.name]}`;
  const scripts = sedScripts(parsed);
  if (!scripts.length) return 'sed without a script';
  return sedScriptProblem(scripts.map((s) => s.value).join('\n'), 'exact');
}
