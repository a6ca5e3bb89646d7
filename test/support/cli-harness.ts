/**
 * The setting most CLI test files share: a test harness (a worker on the suite's Temporal), a
 * temporary folder the CLI runs in, and an environment that points the CLI at that harness with a
 * HARNESS_HOME of its own. Registers its beforeAll/afterAll; read the fields inside tests.
 */
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startHarness, type TestHarness } from './harness';
import { cliEnv, removeTempDirs, runCli, tempDir, type CliResult } from './cli';

export interface CliHarness {
  h: TestHarness;
  dir: string;
  env: NodeJS.ProcessEnv;
  /** Runs the CLI in `dir` with `env`, killed after 60 s. */
  cli(args: string[]): Promise<CliResult>;
}

export function useCliHarness(tempPrefix: string): CliHarness {
  const s = { cli: (args: string[]) => runCli(args, { env: s.env, cwd: s.dir, timeoutMs: 60_000 }) } as CliHarness;
  beforeAll(async () => {
    s.h = await startHarness();
    s.dir = tempDir(tempPrefix);
    s.env = cliEnv({ TEMPORAL_ADDRESS: s.h.address, HARNESS_TASK_QUEUE: s.h.taskQueue, HARNESS_HOME: path.join(s.dir, 'home') });
  });
  afterAll(async () => {
    await s.h?.stop();
    removeTempDirs();
  });
  return s;
}
