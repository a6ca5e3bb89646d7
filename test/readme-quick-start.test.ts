/**
 * The README's library quick start is a file that runs: examples/quick-start/index.mts holds the
 * same bytes as the README's ```ts block, and test/library/pack.test.ts compiles and runs that file
 * from the packed package. This keeps the two the same, so what runs is what the README shows.
 * (The example is left out of the repository's tsconfig: its top-level await needs an ES module
 * setting, which the pack test's node16 check gives it.)
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';

const ROOT = path.join(__dirname, '..');

/** The text between the ```ts fence and its closing fence in the README's "Library quick start" section. */
function quickStartBlock(readme: string): string | undefined {
  const start = readme.indexOf('## Library quick start');
  if (start < 0) return undefined;
  const next = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, next < 0 ? undefined : next);
  return /^```ts\n([\s\S]*?)^```$/m.exec(section)?.[1];
}

it("the README's library quick start is examples/quick-start/index.mts, byte for byte", () => {
  const block = quickStartBlock(readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
  expect(block, 'README.md has no "## Library quick start" section with a ```ts block').toBeDefined();
  const example = readFileSync(path.join(ROOT, 'examples', 'quick-start', 'index.mts'), 'utf8');
  expect(
    example,
    "README.md's library quick start and examples/quick-start/index.mts differ: update both (the example is what test/library/pack.test.ts runs)",
  ).toBe(block);
});
