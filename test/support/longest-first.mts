/**
 * The order `npm test` starts its files in: the longest first, so that the three workers end
 * together instead of one running a long file alone at the end. Vitest orders by the durations
 * of the last run on this machine (node_modules/.vite) and, without them (a clean checkout, CI),
 * by file size, which put small files that wait minutes (the local model's evals, the package
 * installed from its tarball) last. Here a file's duration is the last run's when vitest has it,
 * else the one measured for it in test/durations.json (`npm run test:durations` writes it from a
 * run's JSON report); a file in neither goes first, as vitest runs unknown files first.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const MEASURED_FILE = path.join(import.meta.dirname, '..', 'durations.json');

/** Seconds a file took when measured, by path from the repository root. */
function measured(): Record<string, number> {
  try {
    return (JSON.parse(readFileSync(MEASURED_FILE, 'utf8')) as { seconds: Record<string, number> }).seconds;
  } catch {
    return {};
  }
}

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const known = measured();
    const root = this.ctx.config.root;
    const seconds = (f: TestSpecification): number => {
      const file = path.relative(root, f.moduleId);
      const last = this.ctx.cache.getFileTestResults(`${f.project.name}:${file}`);
      // A file that failed last time goes first, as vitest runs it: its time may have been cut short.
      if (last?.failed) return Number.POSITIVE_INFINITY;
      return last ? last.duration / 1000 : (known[file] ?? Number.POSITIVE_INFINITY);
    };
    return [...files].sort((a, b) => seconds(b) - seconds(a));
  }
}
