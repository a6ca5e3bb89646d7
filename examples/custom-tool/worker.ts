/**
 * A harness worker with your own tools. Run it next to a Temporal server (`npx harness dev`,
 * or TEMPORAL_ADDRESS); it polls its own task queue, so the CLI's worker never takes its sessions.
 *
 *   npm run build && node dist/examples/custom-tool/worker.js
 */
import { createHarnessWorker, harnessHome } from 'durable-agent-harness';
import { lookupOrder, refundOrder } from './tools';

/** The task queue of this example's sessions (the client uses the same). */
export const TASK_QUEUE = process.env.HARNESS_TASK_QUEUE || 'custom-tool-example';

/**
 * Its own home (EXAMPLE_HOME, or the harness home in effect, HARNESS_HOME's or the project's,
 * with `-custom-tool-example` appended), never that home itself: its embedded database belongs
 * to `harness dev`'s worker, and a second process would wait for it for ever.
 */
export function exampleHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.EXAMPLE_HOME || `${harnessHome(env)}-custom-tool-example`;
}

async function main(): Promise<void> {
  const worker = await createHarnessWorker({
    tools: [lookupOrder, refundOrder],
    // Only refund_order sees this, as ctx.secrets.PAYMENTS_TOKEN.
    secrets: { refund_order: { PAYMENTS_TOKEN: process.env.PAYMENTS_TOKEN || 'demo-token' } },
    taskQueue: TASK_QUEUE,
    home: exampleHome(),
  });
  await worker.run(); // until Ctrl-C
}

if (require.main === module) {
  main().catch((err: Error & { hint?: string }) => {
    console.error(`error: ${err.message}${err.hint ? `\nhint: ${err.hint}` : ''}`);
    process.exit(1);
  });
}
