/**
 * One program of a command: its argument vector becomes a SimpleCommand, and whatever it runs in
 * turn (a wrapped program, `sh -c` code, `find -exec` clauses) becomes further frames of the walk.
 * Wrapper chains are followed one link per frame, never by recursion, and at most MAX_CHAIN deep:
 * `nice nice … ls` thousands long once overflowed the stack of every worker that judged it.
 */
import type { Command, Word, Assignment } from 'unbash';
import type { Found, Io, Scope } from './shell-nodes';
import type { Frame } from './shell';
import { cut, toArg } from './shell-words';
import type { Arg } from './types';
import { innerCommands } from './wrappers';

// More wrappers than this in a row (`nice timeout 5 env … ls`) has no honest use; past it the
// command is not analysed further, which asks.
const MAX_CHAIN = 8;
// Where the sandbox's own programs live: `/usr/bin/cat` is cat, `./cat` is whatever was written there.
const SYSTEM_PROGRAM = /^\/(usr\/)?s?bin\/[^/]+$/;

/** A program to record: its words (from the source, or handed on by a wrapper). */
export interface ArgvFrame {
  kind: 'argv';
  words?: readonly (Word | Assignment)[];
  argv?: Arg[];
  end: number;
  scope: Scope;
  io: Io;
  via?: string;
  /** Wrappers passed through to reach this program. */
  chain: number;
}

/** Records the program and returns the frames of what it runs. */
export function programCommand(frame: ArgvFrame, found: Found): Frame[] {
  const argv = frame.argv ?? (frame.words ?? []).map(toArg);
  const head = argv[0];
  if (!head) return [];
  const { scope, io, via } = frame;
  const program = head.literal ? head.value.slice(head.value.lastIndexOf('/') + 1) : head.value;
  // One pass over the words (a wrapper chain hands each program nearly the whole line).
  const args: Arg[] = [];
  const values: string[] = [];
  const unknown: string[] = [];
  const unclear: string[] = [];
  const globs: string[] = [];
  argv.forEach((a, i) => {
    if (a.unknown) unknown.push(`\`${cut(a.value)}\` (${a.unknown})`);
    if (a.unclear) unclear.push(`\`${cut(a.value)}\` (${a.unclear})`);
    if (i === 0) return;
    args.push(a);
    values.push(a.value);
    if (a.glob) globs.push(a.value);
  });
  if (head.literal && head.value.includes('/') && !SYSTEM_PROGRAM.test(head.value)) {
    unknown.unshift(`\`${cut(head.value)}\` (a program file outside /bin and /usr/bin)`);
  }
  found.out.push({
    program, args: values, text: scope.src.slice(head.pos, frame.end), redirects: io.writes, reads: io.reads,
    ...(via ? { via } : {}),
    ...(unknown.length ? { unknown } : {}),
    ...(unclear.length ? { unclear } : {}),
    ...(globs.length ? { globs } : {}),
  });
  if (!head.literal) {
    found.problems.push(`the program \`${head.value}\` is only known at run time`);
    return [];
  }
  const frames: Frame[] = [];
  for (const inner of innerCommands(program, args)) {
    if ('opaque' in inner) found.problems.push(inner.opaque);
    else if ('argv' in inner) {
      if (frame.chain >= MAX_CHAIN) {
        found.problems.push(`more than ${MAX_CHAIN} programs run one another in a row`);
        continue;
      }
      for (const a of inner.settings ?? []) found.settings.push(`\`${cut(a)}\` (${inner.via}) assigns a variable`);
      const last = inner.argv[inner.argv.length - 1];
      frames.push({ kind: 'argv', argv: inner.argv, end: last ? last.end : frame.end, scope, io, via: inner.via, chain: frame.chain + 1 });
    } else if (inner.code.every((a) => a.literal)) {
      const code = inner.code.map((a) => a.value).join(' ');
      frames.push({ kind: 'code', code, scope: { src: code, depth: scope.depth + 1, nesting: scope.nesting, via: inner.via, io: { writes: [], reads: [] } } });
    } else {
      found.problems.push(`\`${inner.via}\` runs shell code only known at run time`);
    }
  }
  return frames;
}

/** A command of redirections alone (`> f`): recorded with program '' when it touches a file. */
export function bareRedirection(node: Command, scope: Scope, io: Io, found: Found): void {
  if (!io.writes.length && !io.reads.length) return;
  found.out.push({ program: '', args: [], text: scope.src.slice(node.pos, node.end), redirects: io.writes, reads: io.reads });
}
