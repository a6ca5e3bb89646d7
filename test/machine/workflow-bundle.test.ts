/**
 * The modules every workflow on a thread shares (machine/workflow-bundle.ts) must hold no
 * per-workflow state. This keeps their import closure to the modules checked for that: a new
 * import into it fails here until it is checked and added. And the bundle the tests run with
 * preloads them, as `npm run build` does.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { PRELOADED_MODULES } from '../../machine/workflow-bundle';

const ROOT = path.join(__dirname, '..', '..');

/** The file an import of a path loads: `<path>.ts`, or a folder's `index.ts`. */
function moduleFile(p: string): string {
  return existsSync(`${p}.ts`) ? `${p}.ts` : path.join(p, 'index.ts');
}

/** Every module a module loads (value imports; `import type` loads nothing), transitively. */
function importClosure(entries: readonly string[]): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    const source = readFileSync(file, 'utf8');
    for (const m of source.matchAll(/^import\s+(?!type\b)(?:[^'"]*?\sfrom\s+)?['"]([^'"]+)['"]/gm)) {
      const spec = m[1]!;
      if (spec.startsWith('.')) visit(moduleFile(path.resolve(path.dirname(file), spec)));
      else packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
    }
  };
  entries.forEach(visit);
  return { files: [...files].map((f) => path.relative(ROOT, f)).sort(), packages: [...packages].sort() };
}

describe('the modules workflows share', () => {
  it('import only the modules checked to hold no per-workflow state', () => {
    // Checked: zod and re2js keep no state of a workflow in module scope, and no workflow writes
    // to their exports (zod's own global config is never set). The program tables are data and
    // pure functions; their one module-scope cache (getopt's long names of a spec) is a function
    // of its key, and their regular expressions are neither global nor sticky (no lastIndex to write).
    // unbash: constant tables in module scope, a lexer and parser of its own for each parse, and
    // nothing written to its exports (shared-parser-frozen.test.ts).
    const programs = ['find', 'getopt', 'git', 'index', 'sed', 'sed-script', 'table'].map((f) => `deterministic/policy/programs/${f}.ts`);
    expect(importClosure(PRELOADED_MODULES)).toEqual({ files: ['deterministic/shared-libraries.ts', ...programs].sort(), packages: ['re2js', 'unbash', 'zod'] });
  });

  it('are preloaded by the bundle workers run', () => {
    const code = readFileSync(inject('workflowBundle'), 'utf8');
    const preload = /exports\.preloadModules = function preloadModules\(\) \{([^}]*)\}/.exec(code)?.[1] ?? '';
    for (const m of PRELOADED_MODULES) expect(preload).toContain(`"./${path.relative(ROOT, m)}"`);
  });
});
