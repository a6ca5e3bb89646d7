/**
 * Figures a test measures (recovery times, pass rates, counts): kept for the run's end, where the
 * global teardown prints them together, since `silent: 'passed-only'` hides the console output of
 * passing tests. Each test file writes its own file under test-output/figures.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { format } from 'node:util';

/** Where figures are kept during a run (git-ignored). */
export const FIGURES_DIR = path.resolve(__dirname, '..', '..', 'test-output', 'figures');

/** Records a figure under `name` (the test file's subject) and logs it, as console.log formats its arguments. */
export function figure(name: string, ...parts: unknown[]): void {
  const line = format(...parts);
  mkdirSync(FIGURES_DIR, { recursive: true });
  appendFileSync(path.join(FIGURES_DIR, `${name.replace(/[^\w.-]+/g, '-')}.txt`), `${line}\n`);
  console.log(line);
}
