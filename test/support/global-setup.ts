/**
 * Starts one real Temporal dev server (in memory, headless) for the whole run and bundles
 * the workflow code once; test files get both through `inject`. Missing `temporal` is a
 * failure, never a skip: CI must run these tests for real.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowBundleOptions } from '../../machine/workflow-bundle';
import Docker from 'dockerode';
import type { TestProject } from 'vitest/node';
import { findTemporalCli } from '../../client/temporal-cli';
import { DEV_SERVER_TUNING } from '../../client/dev-server';
import { freePort } from '../../scripts/free-port';
import { isReachable } from '../../client/temporal';
import { temporalSettings } from '../../client/temporal-settings';
import { FIGURES_DIR } from './figures';
import { LABELS } from '../../activities/sandbox/containers';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    workflowBundle: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const server: ChildProcess = spawn(
    findTemporalCli(),
    ['server', 'start-dev', '--headless', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'error', ...DEV_SERVER_TUNING],
    // Not 'inherit': a server holding the runner's stdout open would hang the run's exit.
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  rmSync(FIGURES_DIR, { recursive: true, force: true });
  const startedAt = Date.now();
  const stop = async () => {
    printFigures();
    await removeTestSandboxes(startedAt);
    server.kill('SIGTERM');
    const done = await Promise.race([exited.then(() => true), sleep(5_000).then(() => false)]);
    if (!done) server.kill('SIGKILL');
  };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'harness-test-'));
  // The default HARNESS_HOME and the key that marks homes live in the user's state folder
  // (machine/state-dir.ts): the run's own here, under the temporary folder, not the developer's.
  process.env.XDG_STATE_HOME = path.join(dir, 'state');
  const bundlePath = path.join(dir, 'workflow-bundle.js');
  const ready = Promise.all([
    bundleWorkflowCode({
      ...workflowBundleOptions(),
      logger: { info() {}, warn() {}, error: console.error, debug() {}, trace() {}, log() {} },
    }),
    (async () => {
      const s = temporalSettings({ TEMPORAL_ADDRESS: address });
      for (let i = 0; i < 240 && !(await isReachable(s, 1000)); i++) await sleep(250);
      if (!(await isReachable(s, 1000))) throw new Error(`temporal dev server did not start on ${address}`);
    })(),
  ]);
  let code: string;
  try {
    [{ code }] = await ready;
  } catch (err) {
    await stop();
    throw err;
  }
  writeFileSync(bundlePath, code);
  project.provide('temporalAddress', address);
  project.provide('workflowBundle', bundlePath);
  return stop;
}

/** The figures tests measured (test/support/figures.ts), printed once at the end of the run. */
function printFigures(): void {
  let files: string[];
  try {
    files = readdirSync(FIGURES_DIR).sort();
  } catch {
    return;
  }
  if (!files.length) return;
  const body = files.map((f) => `${f.replace(/\.txt$/, '')}:\n${readFileSync(`${FIGURES_DIR}/${f}`, 'utf8').replace(/^(?=.)/gm, '  ')}`).join('');
  process.stdout.write(`\nFigures measured in this run (test-output/figures):\n${body}`);
}

/**
 * Removes the sandbox containers this run's tests left (sessions never ended: a test that
 * stops at its assertion), so a run does not leave dozens idle on the machine: only containers
 * made since the run started, for a HARNESS_HOME under the temporary folder.
 */
async function removeTestSandboxes(since: number): Promise<void> {
  const docker = new Docker();
  const tmp = realpathSync(os.tmpdir());
  const left = await docker.listContainers({ all: true, filters: { label: [`${LABELS.managed}=true`] } }).catch(() => []);
  const ours = left.filter((c) => c.Created * 1000 >= since - 1_000 && (c.Labels[LABELS.home] ?? '').startsWith(`${tmp}${path.sep}`));
  await Promise.all(ours.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
}
