/** Installs a Temporal runtime that only logs warnings, so test output stays readable. */
import { DefaultLogger, Runtime } from '@temporalio/worker';

let installed = false;

/** Call before creating a worker; safe to call many times. */
export function quietRuntime(): void {
  if (installed) return;
  installed = true;
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Already installed by another fixture in this process.
  }
}
