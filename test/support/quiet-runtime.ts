/**
 * Installs a Temporal runtime whose own logs go through the test's logger at WARN (and the Rust
 * core's only at ERROR), so test output stays readable: the core's warnings (a query answered after
 * its worker was killed, a poll cut by a test's proxy) are what the tests provoke on purpose.
 */
import { DefaultLogger, makeTelemetryFilterString, Runtime } from '@temporalio/worker';

let installed = false;

/** Call before creating a worker; safe to call many times. */
export function quietRuntime(): void {
  if (installed) return;
  installed = true;
  try {
    Runtime.install({
      // Through console, which the runner holds back for passing tests (the default writes to
      // process.stderr itself, past it).
      logger: new DefaultLogger('WARN', (e) => console.warn(`[${e.level}] ${e.message}`, ...(e.meta ? [e.meta] : []))),
      telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR', other: 'ERROR' }), forward: {} } },
    });
  } catch {
    // Already installed by another fixture in this process.
  }
}
