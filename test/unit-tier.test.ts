/**
 * The unit tier (`npm run test:unit`) holds only tests that reach no real component, chosen by
 * what they import (test/support/unit-tier.mts). These tests hold the rule to what it promises:
 * on small repositories written here, each way code can load a component (directly, through a
 * helper or a source module, a re-export, import(), require(), vitest's inject, dist/) leaves the
 * test out, and imports that leave no code behind (types) do not; on this repository, no test in
 * the tier names the Temporal fixture, Docker, Postgres or child processes in its own source.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { classifyTests, unitTestFiles } from './support/unit-tier.mts';

const ROOT = path.resolve(__dirname, '..');
const scratch = mkdtempSync(path.join(os.tmpdir(), 'unit-tier-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let repos = 0;
/** A repository of the given files (path → source), classified. */
async function classify(files: Record<string, string>) {
  const root = path.join(scratch, `repo-${++repos}`);
  for (const [file, source] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), source);
  }
  return classifyTests(root);
}

const pure = "import { expect, it } from 'vitest';\nimport { readFileSync } from 'node:fs';\n";

describe('the unit tier rule', () => {
  it('takes a test whose imports reach only pure code, Node file and path modules and other packages, through any import cycle', async () => {
    const v = await classify({
      'test/a.test.ts': `${pure}import { a } from '../src/a';\nimport { z } from 'zod';\nit('a', () => expect(a() + String(z) + String(readFileSync)).toBeTruthy());\n`,
      'src/a.ts': "import { b } from './b';\nexport const a = () => b;\n",
      'src/b.ts': "import { a } from './a';\nexport const b = typeof a;\n",
    });
    expect(v.get('test/a.test.ts')).toBeNull();
  });

  it('ignores imports that leave no code behind: `import type`, type-only names, and names used only as types', async () => {
    const v = await classify({
      'test/t.test.ts': [
        pure,
        "import type Docker from 'dockerode';",
        "import { type Client as C } from '@temporalio/client';",
        "import { Pool } from 'pg';",
        "export type T = Docker | C | Pool;",
        "it('t', () => expect(1).toBe(1));",
      ].join('\n'),
    });
    expect(v.get('test/t.test.ts')).toBeNull();
  });

  it('leaves out a test that loads a component through a helper and a source module, naming the chain', async () => {
    const v = await classify({
      'test/x.test.ts': `${pure}import { run } from './support/helper';\nit('x', () => run());\n`,
      'test/support/helper.ts': "import { start } from '../../src/start';\nexport const run = () => start();\n",
      'src/start.ts': "import { spawn } from 'node:child_process';\nexport const start = () => spawn('harness');\n",
    });
    expect(v.get('test/x.test.ts')).toEqual({ reason: 'node:child_process', chain: ['test/x.test.ts', 'test/support/helper.ts', 'src/start.ts'] });
  });

  it('sees every way code is loaded: re-exports, import(), require() in CommonJS helpers, side-effect imports', async () => {
    const v = await classify({
      'test/reexport.test.ts': `${pure}import { Pool } from './support/db';\nit('r', () => expect(Pool).toBeTruthy());\n`,
      'test/support/db.ts': "export * from 'pg';\n",
      'test/dynamic.test.ts': `${pure}it('d', async () => expect(await import('node:http')).toBeTruthy());\n`,
      'test/required.test.ts': `${pure}import './support/server.cjs';\nit('q', () => expect(1).toBe(1));\n`,
      'test/support/server.cjs': "const net = require('net');\nmodule.exports = net;\n",
      'test/side-effect.test.ts': `${pure}import 'dockerode';\nit('s', () => expect(1).toBe(1));\n`,
    });
    expect(v.get('test/reexport.test.ts')?.reason).toBe('pg');
    expect(v.get('test/dynamic.test.ts')?.reason).toBe('node:http');
    expect(v.get('test/required.test.ts')).toEqual({ reason: 'node:net', chain: ['test/required.test.ts', 'test/support/server.cjs'] });
    expect(v.get('test/side-effect.test.ts')?.reason).toBe('dockerode');
  });

  it("leaves out what needs the full suite's setup or a build, and what it cannot follow", async () => {
    const v = await classify({
      'test/inject.test.ts': "import { inject, it } from 'vitest';\nit('i', () => inject('temporalAddress'));\n",
      'test/dist.test.ts': `${pure}import { x } from '../dist/x';\nit('b', () => x);\n`,
      'dist/x.js': 'exports.x = 1;\n',
      'test/package.test.ts': `${pure}import { x } from 'durable-agent-harness';\nit('p', () => x);\n`,
      'test/computed.test.ts': `${pure}const name = 'pg';\nit('c', async () => import(name));\n`,
      'test/missing.test.ts': `${pure}import { m } from './nowhere';\nit('m', () => m);\n`,
      'test/broken.test.ts': `${pure}import { from\n`,
    });
    expect(v.get('test/inject.test.ts')?.reason).toMatch(/inject/);
    expect(v.get('test/dist.test.ts')?.reason).toMatch(/dist\//);
    expect(v.get('test/package.test.ts')?.reason).toMatch(/dist\//);
    expect(v.get('test/computed.test.ts')?.reason).toMatch(/cannot follow/);
    expect(v.get('test/missing.test.ts')?.reason).toMatch(/resolves to no file: \.\/nowhere/);
    expect(v.get('test/broken.test.ts')?.reason).toMatch(/does not parse/);
  });
});

describe("this repository's unit tier", () => {
  /** Names that mean Temporal, the CLI, Docker, Postgres or a child process, as a test's own source would import them. */
  const REAL = /^\s*(import|export)\s+(?!type\b)[^;]*['"]([^'"]*support\/(harness|cli|global-setup)|dockerode|pg|(node:)?child_process|@temporalio\/(client|worker|testing))['"]/m;

  it('holds the pure tests (policy among them) and none that imports the Temporal fixture, Docker, Postgres or child_process', async () => {
    const unit = await unitTestFiles(ROOT);
    expect(unit.some((f) => f.includes('/policy/'))).toBe(true);
    const offending = unit.filter((f) => REAL.test(readFileSync(path.join(ROOT, f), 'utf8')));
    expect(offending).toEqual([]);
  });
});
