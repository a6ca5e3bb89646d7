/**
 * How the workflow code is bundled, the same wherever it is: `npm run build`, the test setup, and
 * a worker or a replay that finds no prebuilt bundle and bundles at start.
 *
 * Preloaded modules. With reusable V8 contexts the SDK still evaluates the bundle's modules once
 * for every workflow it creates, so that no module state is shared between workflows: half of a
 * workflow thread's CPU in bench:eval (two workflows a trial), zod's own evaluation about 8 ms of
 * each. Modules listed here are evaluated once per workflow thread, before any workflow, and
 * their exports are deep-frozen and shared by every workflow on the thread. So they, and
 * everything they import, must hold no per-workflow state, and nothing may write to their
 * exports: test/machine/workflow-bundle.test.ts keeps that set to the modules checked for it. Our
 * own zod schemas cannot be shared: zod defines properties on a schema when it is first used,
 * which a frozen schema refuses.
 */
import path from 'node:path';

// `.ts` under the tests (run from source), `.js` once built.
const EXT = path.extname(__filename);
const ROOT = path.join(__dirname, '..');

/** The modules every workflow on a thread shares (paths, as webpack resolves them). */
export const PRELOADED_MODULES: readonly string[] = [path.join(ROOT, 'deterministic', `shared-libraries${EXT}`)];

/** The options of bundleWorkflowCode, and of a Worker's bundlerOptions with workflowsPath. */
export function workflowBundleOptions(): { workflowsPath: string; preloadModules: string[] } {
  return { workflowsPath: path.join(ROOT, 'workflows', `index${EXT}`), preloadModules: [...PRELOADED_MODULES] };
}

/** Worker options that bundle the workflow code at start, as `npm run build` does. */
export function bundledAtStart(): { workflowsPath: string; bundlerOptions: { preloadModules: string[] } } {
  const { workflowsPath, preloadModules } = workflowBundleOptions();
  return { workflowsPath, bundlerOptions: { preloadModules } };
}
