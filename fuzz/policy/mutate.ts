/**
 * Mutation-based commands: a seed corpus (seeds.jsonl: one JSON string per line, `#` lines are
 * comments) of every class the security review found plus ordinary commands, mutated at random —
 * characters from a shell-significant alphabet inserted, deleted or replaced, two seeds spliced,
 * a span duplicated, or the whole wrapped in a construct. Most mutants are nonsense the policy
 * refuses; the few it allows are the interesting ones.
 */
import * as fs from 'node:fs';
import { SEEDS } from './paths';
import type { Rng } from './prng';
import { single } from './words';

const ALPHABET = [...`;|&<>(){}[]$\`'"\\ \n\t*?~!#=%^,:-/.0123456789aexw`, '$(', '${', '$((', '<(', '>(', '&&', '||', '<<', '<<<', '>&', '&>', ' -i', ' w ', 'e ', '\\\n', '$\'', '{a,b}', '..', '~/'];

const WRAPS: ((c: string) => string)[] = [
  (c) => `(${c})`,
  (c) => `{ ${c}; }`,
  (c) => `echo $(${c})`,
  (c) => `bash -c ${single(c)}`,
  (c) => `sh -c ${single(c)}`,
  (c) => `eval ${single(c)}`,
  (c) => `if true; then ${c}; fi`,
  (c) => `${c} | cat`,
  (c) => `time ${c}`,
  (c) => `! ${c}`,
  (c) => `cat <(${c})`,
  (c) => `for i in 1; do ${c}; done`,
  (c) => `f() { ${c}; }; f`,
  (c) => `${c} 2>/dev/null`,
  (c) => `true && ${c}`,
];

/** Reads the seed corpus. */
export function loadSeeds(file = SEEDS): string[] {
  const seeds: string[] = [];
  for (const [i, line] of fs.readFileSync(file, 'utf8').split('\n').entries()) {
    if (!line.trim() || line.startsWith('#')) continue;
    const value: unknown = JSON.parse(line);
    if (typeof value !== 'string') throw new Error(`${file}:${i + 1}: not a JSON string`);
    seeds.push(value);
  }
  return seeds;
}

/** A mutant of a random seed: one to three mutations. */
export function mutant(rng: Rng, seeds: readonly string[]): string {
  let c = rng.pick(seeds);
  const n = rng.weighted([[5, 1], [3, 2], [1, 3]] as const);
  for (let i = 0; i < n; i++) c = mutate(rng, c, seeds);
  // Commands are argv strings: no NUL; and a bounded length keeps traces small.
  return c.replace(/\0/g, '').slice(0, 2000);
}

function mutate(rng: Rng, c: string, seeds: readonly string[]): string {
  const at = rng.int(c.length + 1);
  switch (rng.weighted([[3, 'insert'], [2, 'delete'], [3, 'replace'], [1, 'splice'], [1, 'duplicate'], [2, 'wrap']] as const)) {
    case 'insert':
      return c.slice(0, at) + rng.pick(ALPHABET) + c.slice(at);
    case 'delete':
      return c.slice(0, at) + c.slice(Math.min(c.length, at + rng.between(1, 3)));
    case 'replace':
      return c.slice(0, at) + rng.pick(ALPHABET) + c.slice(at + 1);
    case 'splice': {
      const other = rng.pick(seeds);
      return c.slice(0, at) + other.slice(rng.int(other.length + 1));
    }
    case 'duplicate': {
      const end = Math.min(c.length, at + rng.between(1, 12));
      return c.slice(0, end) + c.slice(at, end) + c.slice(end);
    }
    default:
      return rng.pick(WRAPS)(c);
  }
}
