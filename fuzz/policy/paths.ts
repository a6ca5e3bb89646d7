/**
 * Where the fuzzer's data files live. They are not compiled (a shell script, a fixture folder,
 * the seed corpus), so both the sources (fuzz/policy, under vitest) and the build
 * (dist/fuzz/policy, under node) find them in the repository's fuzz/policy folder.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

function findRoot(): string {
  let dir = __dirname;
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'fuzz', 'policy', 'driver.sh'))) return dir;
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`cannot find the repository (fuzz/policy/driver.sh) above ${__dirname}`);
    dir = up;
  }
}

const HERE = path.join(findRoot(), 'fuzz', 'policy');

/** The in-container driver script. */
export const DRIVER = path.join(HERE, 'driver.sh');
/** The workspace every command starts from. */
export const FIXTURE = path.join(HERE, 'fixture');
/** The seed corpus of the mutation generator (one JSON string per line). */
export const SEEDS = path.join(HERE, 'seeds.jsonl');
