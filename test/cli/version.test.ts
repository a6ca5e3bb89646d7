/** `harness --version` (and `-V`) prints the version in package.json and exits 0, contacting nothing. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliEnv, describeResult, removeTempDirs, ROOT, runCli, tempDir } from '../support/cli';

const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

afterAll(() => removeTempDirs());

describe('harness --version', () => {
  it('prints the package version on stdout, exit 0, from any folder', async () => {
    // A TEMPORAL_ADDRESS nothing listens on: printing the version must not need a server.
    const env = cliEnv({ TEMPORAL_ADDRESS: '127.0.0.1:1', HARNESS_HOME: tempDir('harness-cli-version-') });
    for (const flag of ['--version', '-V']) {
      const r = await runCli([flag], { env, cwd: tempDir('harness-cli-version-cwd-'), timeoutMs: 30_000 });
      expect(r.code, describeResult(r)).toBe(0);
      expect(r.stdout).toBe(`${VERSION}\n`);
      expect(r.stderr).toBe('');
    }
  });
});
