/**
 * The modules every workflow on a thread shares (machine/workflow-bundle.ts) must hold no
 * per-workflow state. This keeps their import closure to the modules checked for that: a new
 * import into it fails here until it is checked and added. And the bundle the tests run with
 * preloads them, as `npm run build` does.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
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

describe("the workflows' entry", () => {
  /** The workflow modules each workflow type brings, by the module names of the bundle's cache. */
  const OTHERS = [/workflows\/session\//, /workflows\/eval\//, /workflows\/webhook\./, /workflows\/schedule\./];

  it('evaluates a workflow type\'s module only when a workflow of it starts: a turn none of the others\'', () => {
    // As the SDK runs it, less the activator: each workflow has a module cache of its own.
    const cache: Record<string, unknown> = {};
    const context = vm.createContext({ __webpack_module_cache__: cache, TextDecoder, TextEncoder });
    vm.runInContext(`${readFileSync(inject('workflowBundle'), 'utf8')}\n;globalThis.__entry = __TEMPORAL__;`, context);
    const workflows = (context.__entry as { importWorkflows(): Record<string, (...args: unknown[]) => unknown> }).importWorkflows();
    expect(Object.keys(workflows).sort()).toEqual(['evalWorkflow', 'purgeWorkflow', 'scheduledMessageWorkflow', 'sessionWorkflow', 'storedSessionsWorkflow', 'turnWorkflow', 'webhookWorkflow']);
    for (const [name, fn] of Object.entries(workflows)) expect(fn.name).toBe(name);
    const workflowModules = () => Object.keys(cache).filter((m) => /\/workflows\//.test(m) && !/\/workflows\/index\./.test(m));
    expect(workflowModules()).toEqual([]);
    // Without a workflow's context the turn fails once its module is evaluated: what it loaded is what a turn loads.
    try {
      void (workflows.turnWorkflow!({}) as Promise<unknown>)?.catch?.(() => undefined);
    } catch {
      // expected: no activator
    }
    const loaded = workflowModules();
    expect(loaded.some((m) => /\/workflows\/turn\/turn\./.test(m))).toBe(true);
    expect(loaded.filter((m) => OTHERS.some((re) => re.test(m)))).toEqual([]);
  });

  it('imports no workflow module itself (type imports only)', () => {
    expect(importClosure([path.join(ROOT, 'workflows', 'index.ts')]).files).toEqual(['workflows/index.ts']);
  });
});
