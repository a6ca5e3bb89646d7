/**
 * Grammar-based commands: simple commands (programs.ts) composed with bash's constructs —
 * pipes, lists, subshells, groups, redirections of every operator (fd forms, `{var}>`), here-docs
 * quoted and unquoted with `$(…)` in the body, here-strings, process substitution, `[[ ]]`,
 * `(( ))`, `$(( ))`, `${…}`, case, if, while, for, functions, `time`, `!`, coproc,
 * assignments, aliases, eval, wrappers and `sh -c` / `bash -c` — nested. `plain` makes the
 * well-formed everyday commands a strict policy should allow; `wild` the rest.
 */
import type { Rng } from './prng';
import { simpleCommand } from './programs';
import { fileWord, quote, single, TARGETS, textWord } from './words';

interface Ctx {
  depth: number;
  /** Here-document bodies to append after the command line; undefined where a body cannot go
   * (inside quotes given to `bash -c`). */
  heredocs?: string[];
}

/** An everyday command: a few read-only programs in pipes and lists, literal files, sinks. */
export function plain(rng: Rng): string {
  const parts: string[] = [];
  const n = rng.weighted([[5, 1], [3, 2], [1, 3]] as const);
  for (let i = 0; i < n; i++) {
    const stages = rng.weighted([[4, 1], [4, 2], [2, 3]] as const);
    const pipe: string[] = [];
    for (let j = 0; j < stages; j++) {
      let c = simpleCommand(rng, 0.06, 0.04);
      if (rng.chance(0.12)) c += ` ${rng.pick(['2>/dev/null', '>/dev/null', '2>&1', '< a.txt', '</dev/null', '>&2', '2>/dev/null >/dev/null'])}`;
      pipe.push(c);
    }
    let p = pipe.join(rng.chance(0.05) ? ' |& ' : ' | ');
    if (rng.chance(0.08)) p = rng.chance(0.5) ? `(${p})` : `{ ${p}; }`;
    parts.push(p);
    if (i < n - 1) parts.push(rng.pick([' ; ', ' && ', ' || ', '; ', '\n']));
  }
  return parts.join('');
}

/** A command of any shape, up to a few levels deep. */
export function wild(rng: Rng): string {
  const heredocs: string[] = [];
  const line = list(rng, { depth: 0, heredocs });
  return heredocs.length ? `${line}\n${heredocs.join('\n')}` : line;
}

function list(rng: Rng, ctx: Ctx): string {
  const n = rng.weighted([[6, 1], [3, 2], [1, 3]] as const);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    out.push(pipeline(rng, ctx));
    // A newline would put the here-document bodies collected so far in the wrong place.
    if (i < n - 1) out.push(rng.pick([' ; ', ' && ', ' || ', ' & ', ';']));
  }
  return out.join('');
}

function pipeline(rng: Rng, ctx: Ctx): string {
  const stages = rng.weighted([[5, 1], [3, 2], [1, 3]] as const);
  const cmds: string[] = [];
  for (let i = 0; i < stages; i++) cmds.push(command(rng, ctx));
  const prefix = rng.weighted([[12, ''], [1, '! '], [1, 'time '], [1, 'time -p '], [1, '! time ']] as const);
  return prefix + cmds.join(rng.chance(0.1) ? ' |& ' : ' | ');
}

function command(rng: Rng, ctx: Ctx): string {
  const inner: Ctx = { ...ctx, depth: ctx.depth + 1 };
  const deep = ctx.depth >= 2;
  const kind = rng.weighted([
    [10, 'simple'],
    [deep ? 0 : 1.5, 'subshell'],
    [deep ? 0 : 1.5, 'group'],
    [deep ? 0 : 1, 'if'],
    [deep ? 0 : 1, 'loop'],
    [deep ? 0 : 1, 'case'],
    [1, 'test'],
    [1, 'arith'],
    [deep ? 0 : 0.7, 'function'],
    [0.4, 'coproc'],
    [1.2, 'assign'],
    [deep ? 0 : 1, 'eval'],
    [deep ? 0 : 1.2, 'shell'],
    [1.5, 'wrapper'],
    [0.3, 'alias'],
  ] as const);
  switch (kind) {
    case 'simple':
      return simple(rng, ctx);
    case 'subshell':
      return `(${list(rng, inner)})${redirection(rng, ctx, 0.2)}`;
    case 'group':
      return `{ ${list(rng, inner)}; }${redirection(rng, ctx, 0.2)}`;
    case 'if':
      return `if ${list(rng, inner)}; then ${list(rng, inner)};${rng.chance(0.4) ? ` else ${list(rng, inner)};` : ''} fi${redirection(rng, ctx, 0.15)}`;
    case 'loop':
      return `${rng.pick([
        () => `for f in ${fileWord(rng)} ${fileWord(rng)}; do ${list(rng, inner)}; done`,
        () => `for f in ${fileWord(rng)}; do cat "$f"; done`,
        () => `while read -r l; do echo "$l"; done < ${fileWord(rng)}`,
        () => `while false; do ${list(rng, inner)}; done`,
        () => `until true; do ${list(rng, inner)}; done`,
        () => `for ((i = 0; i < 2; i++)); do ${list(rng, inner)}; done`,
      ])()}${redirection(rng, ctx, 0.15)}`;
    case 'case':
      return `case ${textWord(rng)} in ${rng.pick(['a', 'x|y', '*', 'foo'])}) ${list(rng, inner)};; *) ${list(rng, inner)};; esac${redirection(rng, ctx, 0.15)}`;
    // Compound commands run no program: a redirection on one writes all the same.
    case 'test':
      return rng.pick([
        `[[ -f ${fileWord(rng)} ]]`, `[[ ${textWord(rng)} == ${textWord(rng)} ]]`, '[[ a == b || touch x ]]', '[[ x > victim.txt ]]',
        `[[ -n ${textWord(rng)} && -d sub ]]`, '[[ $(touch x) ]]', "[[ -v 'a[$(touch x)]' ]]", '[[ a =~ ^a ]]', '[[ x < y ]]',
        `[[ ${fileWord(rng)} -nt ${fileWord(rng)} ]]`, '[[ 1 -eq a[$(touch x)] ]]', "[[ 'a[$(touch x)]' -eq 1 ]]",
      ]) + redirection(rng, ctx, 0.25);
    case 'arith':
      return rng.pick(['(( 1 + 1 ))', '(( i++ ))', '(( a[$(touch x)] ))', 'echo $(( 1 + 2 ))', 'echo $((a[$(touch x)]))',
        'echo $[1+1]', '(( x = 2 ))', 'let i=1', 'echo $(( $(cat in | head -n 1) * 2 ))', '(( 1 ))']) + redirection(rng, ctx, 0.25);
    case 'function':
      return rng.pick([
        () => `f() { ${list(rng, inner)}; }; f`,
        () => `function g { ${list(rng, inner)}; }; g ${fileWord(rng)}`,
        () => `ls() { touch x; }; ls`,
        () => `cat() { ${simple(rng, inner)}; }; cat a.txt`,
      ])();
    case 'coproc':
      return rng.pick([`coproc ${simple(rng, inner)}`, `coproc C { ${list(rng, inner)}; }`, 'coproc ls']);
    case 'assign':
      return rng.pick([
        () => `X=${fileWord(rng)} ${simple(rng, inner)}`,
        () => `X=${fileWord(rng)}; cat "$X"`,
        () => `PATH=/workspace ${simple(rng, inner)}`,
        () => `PATH=/workspace/sub:$PATH ls`,
        () => `a[$(touch x)]=1`,
        () => `X=$(${simple(rng, inner)})`,
        () => `export X=1; ${simple(rng, inner)}`,
        () => `IFS=/ read -r a b <<< ${single('x/y')}`,
        () => `declare -a A=(${fileWord(rng)}); cat "\${A[0]}"`,
        () => `LC_ALL=C sort ${fileWord(rng)}`,
      ])();
    case 'eval':
      return `eval ${quote(rng, list(rng, { depth: inner.depth }))}`;
    case 'shell':
      return `${rng.pick(['sh', 'bash', 'dash', '/bin/sh', 'bash --norc'])} -c ${quote(rng, list(rng, { depth: inner.depth }))}`;
    case 'wrapper':
      return `${rng.pick(['nice', 'nice -n 5', 'nice nice nice', 'env', 'env -u X', 'env -u X env -u X', 'env -i', 'env X=1',
        'timeout 5', 'timeout -s KILL 3', 'stdbuf -o0', 'nohup', 'command', 'builtin', 'exec', 'xargs', 'xargs -0',
        'command -p', 'setsid', 'ionice -c 3', 'taskset 1', 'time'])} ${simple(rng, inner)}`;
    default:
      return rng.pick([
        "shopt -s expand_aliases\nalias ls='touch x'\nls",
        "alias cat='touch y'; cat a.txt",
        "shopt -s expand_aliases; alias q='touch q'\nq",
      ]);
  }
}

/** A simple command with words from anywhere and, sometimes, redirections or expansions. */
function simple(rng: Rng, ctx: Ctx): string {
  let c = simpleCommand(rng, 0.15, 0.15);
  if (rng.chance(0.12)) c += ` ${rng.pick(['$(cat x)', '"$(ls)"', '`echo a.txt`', `<(${simpleCommand(rng, 0.1)})`, '$((1+1))', '${X:-a.txt}', '"${HOME}"'])}`;
  return c + redirection(rng, ctx, 0.3);
}

function redirection(rng: Rng, ctx: Ctx, p: number): string {
  if (!rng.chance(p)) return '';
  const target = () => quote(rng, rng.pick(TARGETS));
  const op = rng.weighted([
    [4, () => rng.pick(['2>/dev/null', '>/dev/null', '2>&1', '>&2', '1>&2', '</dev/null', '0<&-', '>&-', '3>&1'])],
    [3, () => `${rng.pick(['>', '>>', '&>', '&>>', '>|', '2>', '3>', '>&', '2>>', '1>', '{fd}>', '5>'])} ${target()}`],
    [2, () => `${rng.pick(['<', '<>', '{fd}<', '0<', '3<'])} ${fileWord(rng, 0.05)}`],
    [2, () => `<<< ${rng.pick([textWord(rng), '"$(touch x)"', "'$(touch x)'", '$HOME', '"$(cat a.txt)"'])}`],
    [ctx.heredocs ? 2 : 0, () => heredoc(rng, ctx.heredocs!)],
  ] as const);
  return ` ${op()}`;
}

function heredoc(rng: Rng, bodies: string[]): string {
  const delim = rng.pick(['EOF', 'END', 'X']);
  const [op, quoted] = rng.pick([['<<', false], ['<<', true], ['<<-', false], ['<<', false]] as const);
  const body = rng.pick(['hello', '$(touch x)', 'a $HOME b', '`touch y`', 'foo\nbar', '$((1+2))', '${X:-$(touch z)}', 'plain text']);
  bodies.push(`${op === '<<-' ? '\t' : ''}${body}\n${delim}`);
  return `${op}${quoted ? rng.pick([`'${delim}'`, `"${delim}"`, `\\${delim}`]) : delim}`;
}
