/**
 * FROZEN for replay: the `readOnly` knowledge of policies judged before the exact analysis
 * (version 2 and unversioned policies in turns recorded without the `policy-exact` patch). Do not
 * change what it accepts; new knowledge goes to ../programs/.
 *
 * Which invocations of the read-only programs really only read: a table of per-program
 * inspectors that know the options that write files or run code (`sort -o`, `uniq in out`,
 * `sed -i` and sed's `w`/`e` commands, `git diff --output` ...). Knowledge of command lines lives
 * here, in code; rules stay data and refer to it with the `readOnly` condition.
 * Changing what an inspector accepts changes decisions: policies of version 2 rely on it, so a
 * looser inspector needs a new policy version.
 */
import { sedScriptProblem } from '../programs/sed-script';
import { sedScripts } from '../programs/sed';

/** How a long option takes a value: never, always (`--opt v` or `--opt=v`), or only with `=`. */
type LongKind = 'flag' | 'value' | 'optional';

/** A program's options, enough to tell options from operands and to spot the writing ones. */
interface OptionSpec {
  /** Short options that take a value (the rest of the word, or the next word). */
  valued?: string;
  /** Every other short option the program knows; when given, an unknown letter is "not sure". */
  flags?: string;
  /** Every long option the program knows (getopt_long accepts any unambiguous prefix). */
  long?: Record<string, LongKind>;
}

/** One option as the program sees it: its short letter or full long name, its value, and the
 * index of the argument holding the value. */
interface Option {
  name: string;
  value?: string;
  at?: number;
}

/** The options and operands of a command line (with the operands' indices), or why they cannot
 * be told apart. */
type Parsed = { options: Option[]; operands: string[]; operandAt: number[] } | { unsure: string };

/** Inspects the arguments of one program: a reason it writes or runs something, else undefined. */
type Inspector = (args: string[]) => string | undefined;

/**
 * Why this invocation is not read-only (it writes files, runs code, or the inspector is unsure),
 * or undefined when it only reads. Programs without an inspector are never read-only. `globs`
 * are the arguments that expand to file names: for a program with writing options, a file
 * named `-i` or a second operand would change what it does, so a glob makes it unsure.
 */
export function notReadOnly(program: string, args: string[], globs: readonly string[] = []): string | undefined {
  if (!hasInspector(program)) return `the policy does not know \`${program}\` as read-only`;
  const inspect = INSPECTORS[program]!;
  if (inspect !== none && globs.length) return `\`${globs[0]}\` can expand to option names or more operands`;
  return inspect(args);
}

/** Whether the policy knows the program's writing options (only such programs can be read-only). */
export function hasInspector(program: string): boolean {
  return Object.hasOwn(INSPECTORS, program);
}

const none: Inspector = () => undefined;

/** Options that write or run code, by short letter or long name, with what they do. */
function forbid(spec: OptionSpec, writing: Record<string, string>, extra?: (p: { operands: string[] }) => string | undefined): Inspector {
  return (args) => {
    const parsed = parseOptions(args, spec);
    if ('unsure' in parsed) return parsed.unsure;
    const hit = parsed.options.find((o) => Object.hasOwn(writing, o.name));
    if (hit) return `\`${hit.name.length === 1 ? '-' : '--'}${hit.name}\` ${writing[hit.name]}`;
    return extra?.(parsed);
  };
}

const SORT: OptionSpec = {
  valued: 'kotST',
  flags: 'bcCdfghiMmnrRsuVz',
  long: {
    'ignore-leading-blanks': 'flag', 'dictionary-order': 'flag', 'ignore-case': 'flag', 'general-numeric-sort': 'flag',
    'ignore-nonprinting': 'flag', 'month-sort': 'flag', 'human-numeric-sort': 'flag', 'numeric-sort': 'flag',
    'random-sort': 'flag', 'random-source': 'value', 'reverse': 'flag', 'sort': 'value', 'version-sort': 'flag',
    'batch-size': 'value', 'check': 'optional', 'compress-program': 'value', 'debug': 'flag', 'files0-from': 'value',
    'key': 'value', 'merge': 'flag', 'output': 'value', 'stable': 'flag', 'buffer-size': 'value',
    'field-separator': 'value', 'temporary-directory': 'value', 'parallel': 'value', 'unique': 'flag',
    'zero-terminated': 'flag', 'help': 'flag', 'version': 'flag',
  },
};

const UNIQ: OptionSpec = {
  valued: 'fsw',
  flags: 'cdDiuz',
  long: {
    'count': 'flag', 'repeated': 'flag', 'all-repeated': 'optional', 'skip-fields': 'value', 'group': 'optional',
    'ignore-case': 'flag', 'skip-chars': 'value', 'unique': 'flag', 'zero-terminated': 'flag', 'check-chars': 'value',
    'help': 'flag', 'version': 'flag',
  },
};

const SED: OptionSpec = {
  valued: 'efl',
  flags: 'bnrEsuzi',
  long: {
    'quiet': 'flag', 'silent': 'flag', 'debug': 'flag', 'expression': 'value', 'file': 'value',
    'follow-symlinks': 'flag', 'in-place': 'optional', 'line-length': 'value', 'posix': 'flag',
    'regexp-extended': 'flag', 'separate': 'flag', 'sandbox': 'flag', 'unbuffered': 'flag', 'null-data': 'flag',
    'zero-terminated': 'flag', 'help': 'flag', 'version': 'flag', 'binary': 'flag',
  },
};

const FILE: OptionSpec = {
  valued: 'eFfmP',
  flags: 'bcCdEhiIkLlNnprsSvzZ0',
  long: {
    'apple': 'flag', 'brief': 'flag', 'checking-printout': 'flag', 'compile': 'flag', 'debug': 'flag',
    'exclude': 'value', 'exclude-quiet': 'value', 'extension': 'flag', 'files-from': 'value', 'separator': 'value',
    'help': 'flag', 'keep-going': 'flag', 'list': 'flag', 'dereference': 'flag', 'magic-file': 'value',
    'mime': 'flag', 'mime-type': 'flag', 'mime-encoding': 'flag', 'no-dereference': 'flag', 'no-buffer': 'flag',
    'no-pad': 'flag', 'no-sandbox': 'flag', 'print0': 'flag', 'parameter': 'value', 'preserve-date': 'flag',
    'raw': 'flag', 'special-files': 'flag', 'uncompress': 'flag', 'uncompress-noreport': 'flag', 'version': 'flag',
  },
};

// git's option lists are open-ended (every diff and log option): only the writing and
// code-running ones are looked for, in any position, with prefix abbreviations.
const GIT_WRITING: Record<string, string> = {
  'output': 'writes a file',
  'ext-diff': 'runs an external diff program',
  'textconv': 'runs text conversion filters',
  'exec-path': 'runs git programs from another folder',
  'git-dir': 'points git at another repository',
  'work-tree': 'points git at another work tree',
};
// Full names that are prefixes of a writing one but mean something else.
const GIT_EXACT = new Set(['text']);

function git(args: string[]): string | undefined {
  for (const a of args) {
    if (a === '--') break;
    if (a === '-c' || a === '-C') return `\`${a}\` changes git's configuration or folder`;
    if (!a.startsWith('--')) continue;
    const name = a.slice(2).split('=', 1)[0]!;
    if (name === '' || GIT_EXACT.has(name)) continue;
    const hit = Object.keys(GIT_WRITING).find((w) => w.startsWith(name));
    if (hit) return `\`--${hit}\` ${GIT_WRITING[hit]}`;
  }
  return undefined;
}

function sed(args: string[]): string | undefined {
  const parsed = parseOptions(args, SED);
  if ('unsure' in parsed) return parsed.unsure;
  for (const o of parsed.options) {
    if (o.name === 'i' || o.name === 'in-place') return '`-i` edits files in place';
    if (o.name === 's' || o.name === 'separate') return '`-s` is only used with in-place editing';
    if (o.name === 'f' || o.name === 'file') return '`-f` reads a sed script the policy cannot see';
  }
  const scripts = sedScripts(parsed);
  if (!scripts.length) return 'sed without a script';
  return sedScriptProblem(scripts.map((s) => s.value).join('\n'), 'v2');
}

/**
 * The arguments that are code for the program rather than file names (sed's script), by
 * index: `/start/,/end/p` is not a path outside the workspace.
 */
export function codeArgs(program: string, args: string[]): Set<number> {
  if (program !== 'sed') return new Set();
  const parsed = parseOptions(args, SED);
  return 'unsure' in parsed ? new Set() : new Set(sedScripts(parsed).map((s) => s.at));
}

const FIND_WRITING = new Set(['-exec', '-execdir', '-ok', '-okdir', '-delete', '-fprint', '-fprint0', '-fprintf', '-fls']);

function find(args: string[]): string | undefined {
  const hit = args.find((a) => FIND_WRITING.has(a));
  return hit && `\`${hit}\` runs a program, deletes or writes files`;
}

function tree(args: string[]): string | undefined {
  // tree reads every letter of `-xyz` as an option; `-o` names an output file, `-R` writes
  // 00Tree.html into each folder.
  for (const a of args) {
    if (a === '--') break;
    if (/^-[^-]*o/.test(a) || a.startsWith('--o')) return '`-o` writes the listing to a file';
    if (/^-[^-]*R/.test(a)) return '`-R` writes 00Tree.html files';
  }
  return undefined;
}

/** The inspectors of the programs the default rules treat as read-only. */
const INSPECTORS: Record<string, Inspector> = {
  ls: none, cat: none, head: none, tail: none, grep: none, egrep: none, fgrep: none, wc: none, cut: none, tr: none,
  echo: none, pwd: none, stat: none, du: none, diff: none, cmp: none, comm: none, basename: none, dirname: none,
  realpath: none, which: none, true: none, false: none, test: none, '[': none, nl: none, tac: none, rev: none,
  paste: none, seq: none, md5sum: none, sha256sum: none,
  // bash's printf -v assigns a variable, which changes what later programs do.
  printf: (args) => (args.some((a) => /^-[^-]*v/.test(a)) ? '`-v` assigns a variable' : undefined),
  sort: forbid(SORT, {
    o: 'writes a file', output: 'writes a file',
    T: 'writes temporary files into a folder', 'temporary-directory': 'writes temporary files into a folder',
    'compress-program': 'runs a program',
  }),
  uniq: forbid(UNIQ, {}, ({ operands }) => (operands.length > 1 ? 'a second file operand is written' : undefined)),
  sed,
  file: forbid(FILE, { C: 'writes a compiled magic file', compile: 'writes a compiled magic file' }),
  tree,
  find,
  git,
};

/**
 * Splits arguments into options and operands the way GNU getopt_long does (options anywhere
 * until `--`, clustered short options, `--name=value`, unambiguous prefixes). Unknown or
 * ambiguous options make it unsure.
 */
function parseOptions(args: string[], spec: OptionSpec): Parsed {
  const options: Option[] = [];
  const operands: string[] = [];
  const operandAt: number[] = [];
  const valued = spec.valued ?? '';
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
      const names = Object.keys(spec.long ?? {});
      const name = names.includes(given) ? given : names.filter((n) => n.startsWith(given)).length === 1
        ? names.find((n) => n.startsWith(given))!
        : undefined;
      if (name === undefined) return { unsure: `the option \`--${given}\` is not known to the policy` };
      const kind = spec.long![name]!;
      if (eq >= 0) options.push({ name, value: a.slice(eq + 1), at: i });
      else if (kind === 'value') {
        i++;
        options.push({ name, value: args[i] ?? '', at: i });
      } else options.push({ name });
      continue;
    }
    if (a.startsWith('-') && a.length > 1) {
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
        if (spec.flags !== undefined && !spec.flags.includes(c)) return { unsure: `the option \`-${c}\` is not known to the policy` };
        options.push({ name: c });
      }
      continue;
    }
    operands.push(a);
    operandAt.push(i);
  }
  return { options, operands, operandAt };
}
