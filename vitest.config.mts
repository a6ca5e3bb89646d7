import { defineConfig } from 'vitest/config';

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
    // Two cores: more parallel files only fight over the dev server and the CPU.
    maxWorkers: 2,
  },
});
