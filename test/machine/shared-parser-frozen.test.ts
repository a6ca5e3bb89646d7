/**
 * The shell parser (unbash) is among the modules workflows share (machine/workflow-bundle.ts):
 * the SDK deep-freezes every export of a shared module, classes and their prototypes included. A
 * parser that wrote to any of them (a cache on a class, a method replaced on an instance) would
 * throw inside a workflow, or see another workflow's writes. This freezes unbash as the SDK does
 * and checks that every command of the policy corpus parses and is decided exactly as before.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'unbash';
import { analyzeCommand } from '../../deterministic/policy/shell';
import { decide } from '../../deterministic/policy/decide';
import { freezePolicy } from '../../deterministic/policy';
import { parsePolicy } from '../../deterministic/policy/schema';

const CORPUS = path.join(__dirname, '..', 'deterministic', 'policy', 'fixtures', 'legacy-decisions.json');
const DEFAULT_POLICY = freezePolicy(parsePolicy(undefined));
const UNBASH = path.join(__dirname, '..', '..', 'node_modules', 'unbash', 'dist');

/** The SDK's deepFreeze (reusable-vm.js): every reachable property first, then the object. */
function deepFreeze(object: unknown, seen = new WeakSet<object>()): void {
  if (object === null || (typeof object !== 'object' && typeof object !== 'function') || seen.has(object)) return;
  seen.add(object);
  if (Object.isFrozen(object)) return;
  for (const key of Reflect.ownKeys(object)) {
    try {
      deepFreeze((object as Record<PropertyKey, unknown>)[key], seen);
    } catch {
      // As the SDK: some objects (typed arrays) cannot be frozen.
    }
  }
  try {
    Object.freeze(object);
  } catch {
    // A typed array with elements refuses; the SDK leaves it as it is too.
  }
}

const extra = [
  "cat <<'EOF' > out.txt\nhello $USER\nEOF",
  'for f in *.{ts,js}; do echo "$f" $((1 + 2)); done',
  "case $x in a|b) echo 'ab';; *) printf $'\\x41\\n';; esac",
  'diff <(sort a) <(sort b) && f() { echo "$@"; }; f 1',
  'ls !(node_modules) | while read -r l; do [[ $l == *.md ]] && echo ${l%.md}; done',
  'x=( one two ); echo "${x[@]:1}" `date` $(( x[0] ))',
];

describe('the shell parser, frozen as workflows share it', () => {
  it('parses and decides the whole policy corpus exactly as unfrozen', async () => {
    const corpus = JSON.parse(readFileSync(CORPUS, 'utf8')) as { calls: { tool: string; args: { command?: string } }[] };
    const commands = [...corpus.calls.filter((c) => c.tool === 'run_shell' && typeof c.args.command === 'string').map((c) => c.args.command!), ...extra];
    expect(commands.length).toBeGreaterThan(250);
    const seen = (command: string) => {
      let tree: string;
      try {
        tree = JSON.stringify(parse(command));
      } catch (err) {
        tree = `throws ${(err as Error).message}`;
      }
      return { tree, analysis: JSON.stringify(analyzeCommand(command)), decision: decide(DEFAULT_POLICY, { tool: 'run_shell', risk: 'dangerous', args: { command } }) };
    };
    const before = commands.map(seen);
    // Every module of the package, as the bundle's preload evaluates and shares them.
    for (const file of readdirSync(UNBASH).filter((f) => f.endsWith('.js'))) deepFreeze(await import(pathToFileURL(path.join(UNBASH, file)).href));
    expect(Object.isFrozen(parse)).toBe(true);
    expect(commands.map(seen)).toEqual(before);
  });
});
