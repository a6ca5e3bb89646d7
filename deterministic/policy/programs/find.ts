/**
 * find's command line as data: its leading options, then paths, then an expression of
 * predicates, each with the number of words it takes. A predicate not listed makes the policy
 * ask; the ones that delete, write files, run programs or read file names are refused.
 */

/** A predicate's arity, whether its words are patterns (never paths), and why it is refused. */
interface Predicate {
  args: number;
  pattern?: true;
  refuse?: string;
}

const RUNS = 'runs a program';
const WRITES = 'writes a file';

function table(arity: number, names: string, extra: Omit<Predicate, 'args'> = {}): Record<string, Predicate> {
  return Object.fromEntries(names.split(/\s+/).filter(Boolean).map((n) => [n, { args: arity, ...extra }]));
}

const PREDICATES: Readonly<Record<string, Predicate>> = {
  ...table(0, '-daystart -follow -nowarn -warn -depth -mount -noleaf -xdev -ignore_readdir_race -noignore_readdir_race'),
  ...table(0, '-empty -false -true -nouser -nogroup -readable -writable -executable -print -print0 -ls -prune -quit'),
  ...table(0, '( ) ! , -not -a -and -o -or'),
  ...table(1, '-maxdepth -mindepth -regextype -amin -atime -cmin -ctime -mmin -mtime -used -gid -uid -inum -links'),
  ...table(1, '-group -user -type -xtype -perm -size -fstype -context'),
  ...table(1, '-anewer -cnewer -newer -samefile'),
  ...table(1, '-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname -printf', { pattern: true }),
  '-delete': { args: 0, refuse: 'deletes files' },
  '-fls': { args: 1, refuse: WRITES },
  '-fprint': { args: 1, refuse: WRITES },
  '-fprint0': { args: 1, refuse: WRITES },
  '-fprintf': { args: 2, refuse: WRITES },
  '-exec': { args: 0, refuse: RUNS },
  '-execdir': { args: 0, refuse: RUNS },
  '-ok': { args: 0, refuse: RUNS },
  '-okdir': { args: 0, refuse: RUNS },
  '-files0-from': { args: 1, refuse: 'reads the names of the paths to search from a file the policy cannot see' },
};

// -newerXY compares with a reference (a file, or a date for -newermt and the like).
const NEWER = /^-newer[aBcmt][aBcmt]$/;

/** What find's arguments do: a reason it is not read-only, and which words are patterns. */
export function inspectFind(args: readonly string[]): { problem?: string; code: Set<number> } {
  const code = new Set<number>();
  let i = 0;
  // Leading options: -H -L -P, -D debugopts, -Olevel.
  while (i < args.length) {
    const a = args[i]!;
    if (a === '-H' || a === '-L' || a === '-P' || /^-O[0-9]$/.test(a)) i++;
    else if (a === '-D') i += 2;
    else break;
  }
  // Paths: every word before the first that starts an expression.
  while (i < args.length && !startsExpression(args[i]!)) i++;
  for (; i < args.length; i++) {
    const a = args[i]!;
    const p = Object.hasOwn(PREDICATES, a) ? PREDICATES[a]! : NEWER.test(a) ? { args: 1 } : undefined;
    if (!p) return { problem: `the find expression word \`${a.slice(0, 40)}\` is not known to the policy`, code };
    if (p.refuse) return { problem: `\`${a}\` ${p.refuse}`, code };
    for (let k = 1; k <= p.args; k++) if (p.pattern) code.add(i + k);
    i += p.args;
  }
  return { code };
}

function startsExpression(word: string): boolean {
  return (word.startsWith('-') && word.length > 1) || word === '(' || word === '!' || word === ')' || word === ',';
}
