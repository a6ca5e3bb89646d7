/** Where the project and its state live. */
import path from 'node:path';
import { homeOf, lookupIn } from './state-dir';

/** The package root (works from sources and from dist/). */
export function projectRoot(): string {
  const here = __dirname;
  const parts = here.split(path.sep);
  const dist = parts.lastIndexOf('dist');
  return dist >= 0 ? parts.slice(0, dist).join(path.sep) || path.sep : path.resolve(here, '..');
}

/**
 * Where HARNESS_HOME is (absolute): the variable, else the project's folder in the user's state
 * folder (machine/state-dir.ts). Only the path: openHome (machine/home.ts) checks the folder is this
 * user's before anything in it is used.
 */
export function harnessHome(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string {
  return homeOf(lookupIn(env), cwd);
}

/** Where the embedded memory database (PGlite) keeps its data for a harness home. */
export function embeddedDataDir(home: string): string {
  return `${home.replace(/\/+$/, '')}/pgdata`;
}

/** Files the embedded deployment keeps under HARNESS_HOME. */
export function embeddedFiles(home: string) {
  return {
    db: path.join(home, 'temporal.db'),
    serverPid: path.join(home, 'server.pid'),
    serverLog: path.join(home, 'logs', 'temporal.log'),
    workerPid: path.join(home, 'worker.pid'),
    workerReady: path.join(home, 'worker.ready'),
    workerLog: path.join(home, 'logs', 'worker.log'),
  };
}

/** Path of the workflow bundle written by `npm run build`. */
export function workflowBundlePath(): string {
  return path.join(projectRoot(), 'dist', 'workflow-bundle.js');
}
