import { defineConfig } from 'vitest/config';
import { LongestFirst } from './test/support/longest-first.mts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // The runner's progress and failures only: what a passing test logged (worker state, activity
    // retries it provoked) is dropped; a failing test's logs are printed with it. Figures that tests
    // measure are printed together at the end (test/support/figures.ts).
    silent: 'passed-only',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Most test time is waiting (outages, timeouts, a model's delay), not CPU: three files at once
    // on two cores (measured: 2 → 15.5 min, 3 → see the README's test figures).
    maxWorkers: 3,
    // The longest files first, so the workers end together (test/support/longest-first.mts).
    sequence: { sequencer: LongestFirst },
  },
});
