/**
 * Splits a program's arguments into options and operands the way GNU getopt_long does: options
 * anywhere until `--` (permutation: the sandbox never sets POSIXLY_CORRECT), clustered short
 * options, a short option's value in the rest of its word or the next word, `--name=value`,
 * unambiguous prefixes of long names. An option the spec does not know makes the result unsure:
 * the exact analysis only allows what it understands.
 */
import type { ProgramSpec } from './spec';

/** One option as the program sees it: its short letter or full long name, its value, and the
 * index of the argument holding the value. */
export interface Option {
  name: string;
  value?: string;
  at?: number;
}

/** Options and operands (with the operands' indices), or why they cannot be told apart. */
type Parsed = { options: Option[]; operands: string[]; operandAt: number[] } | { unsure: string };

const NUMERIC = /^-[0-9]+$/;
// The long names of each spec, listed once: a command of thousands of programs parses each.
const LONG_NAMES = new WeakMap<ProgramSpec, readonly string[]>();

function longNames(spec: ProgramSpec): readonly string[] {
  let names = LONG_NAMES.get(spec);
  if (!names) {
    names = Object.keys(spec.long ?? {});
    LONG_NAMES.set(spec, names);
  }
  return names;
}

/** Parses `args` by `spec`; linear in the arguments' total length. */
export function parseOptions(program: string, args: readonly string[], spec: ProgramSpec): Parsed {
  const options: Option[] = [];
  const operands: string[] = [];
  const operandAt: number[] = [];
  const valued = spec.valued ?? '';
  const flags = spec.flags ?? '';
  const long = spec.long ?? {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      for (let j = i + 1; j < args.length; j++) {
        operands.push(args[j]!);
        operandAt.push(j);
      }
      break;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const given = eq < 0 ? a.slice(2) : a.slice(2, eq);
      const name = Object.hasOwn(long, given) ? given : uniquePrefix(longNames(spec), given);
      if (name === undefined) return { unsure: `the option \`--${given}\` of \`${program}\` is not known to the policy` };
      const kind = long[name]!;
      if (eq >= 0) {
        if (kind === 'flag') return { unsure: `the option \`--${name}\` of \`${program}\` takes no value` };
        options.push({ name, value: a.slice(eq + 1), at: i });
      } else if (kind === 'value') {
        i++;
        options.push({ name, value: args[i] ?? '', at: i });
      } else options.push({ name });
      continue;
    }
    if (a.startsWith('-') && a.length > 1) {
      if (spec.numeric && NUMERIC.test(a)) {
        options.push({ name: '#', value: a.slice(1), at: i });
        continue;
      }
      for (let j = 1; j < a.length; j++) {
        const c = a[j]!;
        if (valued.includes(c)) {
          if (j + 1 < a.length) options.push({ name: c, value: a.slice(j + 1), at: i });
          else {
            i++;
            options.push({ name: c, value: args[i] ?? '', at: i });
          }
          break;
        }
        if (!flags.includes(c)) return { unsure: `the option \`-${c}\` of \`${program}\` is not known to the policy` };
        options.push({ name: c });
      }
      continue;
    }
    operands.push(a);
    operandAt.push(i);
  }
  return { options, operands, operandAt };
}

function uniquePrefix(names: readonly string[], given: string): string | undefined {
  if (given === '') return undefined;
  let found: string | undefined;
  for (const n of names) {
    if (!n.startsWith(given)) continue;
    if (found !== undefined) return undefined;
    found = n;
  }
  return found;
}
