// The unit tier (`npm run test:unit`): the test files that reach no real component, chosen by
// what they import (test/support/unit-tier.mts). No global setup: no Temporal dev server, no
// workflow bundle, no build; vitest transpiles the TypeScript itself. `npm test`
// (vitest.config.mts) still runs every file, these included. UNIT_TIER_WHY=1 prints each file
// left out and the import chain that leaves it out.
import { defineConfig } from 'vitest/config';
import { classifyTests } from './test/support/unit-tier.mts';

const root = import.meta.dirname;
const verdicts = await classifyTests(root);
if (process.env.UNIT_TIER_WHY) {
  for (const [file, why] of verdicts) if (why) console.log(`${file}: ${why.reason}\n    via ${why.chain.join(' → ')}`);
}

export default defineConfig({
  test: {
    include: [...verdicts].filter(([, why]) => !why).map(([file]) => file),
    // No network either: a unit test that reaches fetch fails at once instead of waiting on a socket.
    setupFiles: ['test/support/unit-tier-setup.ts'],
    silent: 'passed-only',
    // The same ceilings as the whole suite, so a test passes or fails alike in both tiers.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Threads start faster than forks (a fork a file was most of this tier's time), and these
    // tests compute rather than wait: one worker per core. Each file still gets its own modules;
    // the rule keeps child processes and sockets out, and process.chdir throws in a thread.
    pool: 'threads',
    maxWorkers: '100%',
  },
});
