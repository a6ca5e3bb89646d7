/**
 * The SDK internals workers/workflow-threads.ts relies on, checked against the installed
 * @temporalio/worker: this fails when the SDK changes underneath (an upgrade, a patched copy), so
 * that file is read again against the new SDK before a worker runs it. tsc checks the types it
 * imports from `@temporalio/worker/lib/…`; this checks what types cannot: the version it was read
 * against, the module files it starts threads from, and the behaviour of the SDK code it reuses.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Worker } from '@temporalio/worker';
import { VMWorkflowThreadProxy, WorkerThreadClient } from '@temporalio/worker/lib/workflow/threaded-vm';
import { globalHandlers } from '@temporalio/worker/lib/workflow/vm-shared';

/** The @temporalio/worker version workers/workflow-threads.ts was read against. */
const READ_AGAINST = '1.24.0';

const LIB = '@temporalio/worker/lib';
const ROOT = path.resolve(__dirname, '..', '..');
/** The one source file allowed to reach into the SDK's private modules. */
const THE_FILE = 'workers/workflow-threads.ts';
const source = (module: string) => readFileSync(require.resolve(`${LIB}/${module}`), 'utf8');

/** The text of a class's body in compiled SDK code, up to its export line. */
function classBody(text: string, name: string): string {
  const start = text.indexOf(`class ${name} `);
  const end = text.indexOf(`exports.${name} = ${name};`, start);
  expect(start, `class ${name}`).toBeGreaterThanOrEqual(0);
  expect(end, `the export of ${name}`).toBeGreaterThan(start);
  return text.slice(start, end);
}

/** The repository's TypeScript files (not its dependencies, builds or scratch folders), relative to its root. */
function sourceFiles(dir = ''): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.posix.join(dir, e.name);
    if (e.isDirectory()) return e.name.startsWith('.') || ['node_modules', 'dist', 'test-output', 'coverage'].includes(e.name) ? [] : sourceFiles(rel);
    return /\.(ts|mts)$/.test(e.name) ? [rel] : [];
  });
}

describe('the SDK internals the harness workflow threads use', () => {
  it('are reached from one file only', () => {
    const self = path.relative(ROOT, __filename).split(path.sep).join('/');
    const reaching = sourceFiles().filter((f) => f !== self && readFileSync(path.join(ROOT, f), 'utf8').includes(`${LIB}/`));
    expect(reaching).toEqual([THE_FILE]);
  });

  it('are those of the SDK version they were read against', () => {
    const version = (require('@temporalio/worker/package.json') as { version: string }).version;
    // On a new version: re-read workers/workflow-threads.ts against it (the checks below say
    // where to look first), run bench:step:realistic, then update READ_AGAINST.
    expect(version, 'the installed @temporalio/worker is not the one workers/workflow-threads.ts was read against').toBe(READ_AGAINST);
  });

  it('keep the module files the threads are started from and typed by', () => {
    for (const module of ['worker-options', 'workflow/interface', 'workflow/threaded-vm', 'workflow/vm-shared', 'workflow/workflow-worker-thread', 'workflow/workflow-worker-thread/input', 'workflow/workflow-worker-thread/output']) {
      expect(() => require.resolve(`${LIB}/${module}`), module).not.toThrow();
    }
  });

  it('let a Worker subclass choose the workflow creator', () => {
    expect(typeof (Worker as unknown as { createWorkflowCreator: unknown }).createWorkflowCreator).toBe('function');
    expect((Worker as unknown as { createWorkflowCreator: (...a: unknown[]) => unknown }).createWorkflowCreator.length).toBe(3);
    // Called through `this`, so WatchedWorker's override is the one that runs.
    expect(source('worker')).toMatch(/await this\.createWorkflowCreator\(bundle, compiledOptions, logger\)/);
  });

  it('drive a thread through a client whose send is all the proxy calls', () => {
    expect(WorkerThreadClient.length).toBe(3); // (workerThread, logger, patchActivationCallback)
    for (const m of ['send', 'getActiveWorkflowCount', 'destroy'] as const) expect(typeof WorkerThreadClient.prototype[m], m).toBe('function');
    // A terminated thread rejects what it still had pending (the watch turns that into a deadlock failure).
    expect(classBody(source('workflow/threaded-vm'), 'WorkerThreadClient')).toMatch(/workerThread\.on\('exit'[\s\S]*?completion\.reject\(error\)/);
    expect(typeof VMWorkflowThreadProxy.create).toBe('function');
    expect(VMWorkflowThreadProxy.create.length).toBe(2);
    // A watched thread stands in for the SDK client: it has only send().
    const used = new Set([...classBody(source('workflow/threaded-vm'), 'VMWorkflowThreadProxy').matchAll(/workerThreadClient\.(\w+)/g)].map((m) => m[1]));
    expect([...used]).toEqual(['send']);
  });

  it('run workflow code with the init message\'s timeout as the vm timeout, and none when it is absent', () => {
    const thread = source('workflow/workflow-worker-thread');
    expect(thread.match(/WorkflowCreator\.create\(input\.workflowBundle, input\.isolateExecutionTimeoutMs,/g)).toHaveLength(2);
    for (const module of ['workflow/vm', 'workflow/reusable-vm']) {
      const text = source(module);
      // Every vm timeout is the init message's limit: undefined starts no watchdog thread.
      const timeouts = text.match(/timeout: \w+/g) ?? [];
      expect(timeouts.length, module).toBeGreaterThan(0);
      expect(new Set(timeouts), module).toEqual(new Set(['timeout: isolateExecutionTimeoutMs']));
    }
  });

  it('install the promise hook only through global handlers not yet marked installed', () => {
    expect(typeof globalHandlers.overridePrepareStackTrace).toBe('function');
    expect(globalHandlers.installed).toBe(false);
    expect(globalHandlers.install.toString()).toMatch(/if \(!this\.installed\) \{\s*this\.overridePrepareStackTrace\(\);\s*this\.setPromiseHook\(\);\s*this\.installed = true;/);
    for (const module of ['workflow/vm', 'workflow/reusable-vm']) {
      const text = source(module);
      expect(text, module).toMatch(/globalHandlers\.install\(\)/);
      expect(text, module).not.toMatch(/setPromiseHook/);
      // The `__stack_trace` query answers only with the hook installed.
      expect(text, module).toMatch(/stackTracesEnabled: vm_shared_1\.globalHandlers\.promiseHookInstalled/);
    }
  });
});
