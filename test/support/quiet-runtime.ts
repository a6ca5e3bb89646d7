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
      logger: new DefaultLogger('WARN'),
      telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR', other: 'ERROR' }), forward: {} } },
    });
  } catch {
    // Already installed by another fixture in this process.
  }
}
