/**
 * Structured output's types: a session's `output` schema (on run/send, on its agent, or named on
 * wait) types `result.output` as the object the schema describes. The fixture is compiled by the
 * repository's TypeScript with its compiler settings; any error in it (an `expectTypeOf` that
 * does not hold, a `@ts-expect-error` with nothing to expect) fails here. The compiler runs in a
 * process of its own: reading the client's types takes it seconds, which the unit tier is spared.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.join(__dirname, '..', '..');

describe('structured output types', () => {
  it('types result.output by the output schema', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'harness-output-types-'));
    const config = path.join(dir, 'tsconfig.json');
    writeFileSync(
      config,
      JSON.stringify({
        extends: path.join(ROOT, 'tsconfig.json'),
        compilerOptions: { noEmit: true, declaration: false, sourceMap: false, typeRoots: [path.join(ROOT, 'node_modules', '@types')] },
        include: [],
        // The fixture, and the declarations the repository's own include list brings.
        files: [path.join(__dirname, 'fixtures', 'output-types.ts'), path.join(ROOT, 'deterministic', 'policy', 'unbash.d.ts')],
      }),
    );
    const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const out = await new Promise<string>((resolve) => {
      execFile(process.execPath, [tsc, '-p', config, '--pretty', 'false'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 }, (_err, stdout, stderr) => resolve(`${stdout}${stderr}`));
    });
    expect(out.split('\n').filter((l) => l.trim() !== '')).toEqual([]);
  }, 240_000);
});
