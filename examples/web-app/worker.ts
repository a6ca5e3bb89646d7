/**
 * The web app's agent and its worker: one agent, `notes`, with one risky tool, `publish_note`
 * (risk `write`: the default policy asks a person before each call). server.ts runs this worker
 * in its own process unless WEB_APP_WORKER=external; run it alone with
 *
 *   node dist/examples/web-app/worker.js
 *
 * Offline by default (a scripted model, examples/web-app/script.json); set HARNESS_MODEL (and
 * OPENAI_API_KEY) for a real one.
 */
import { appendFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { createHarnessWorker, defineAgent, defineTool, harnessHome, type HarnessWorker } from 'durable-agent-harness';

/** The task queue of the app's sessions (the server and the worker use the same). */
export const TASK_QUEUE = process.env.HARNESS_TASK_QUEUE || 'web-app-example';

/** Stands for a write to the world (a CMS, a wiki): here a line in the session's workspace. */
export const publishNote = defineTool({
  name: 'publish_note',
  description: 'Publish a short note for everyone to read. Returns the note id.',
  schema: z.object({ title: z.string().min(1).max(100), text: z.string().min(1).max(2000) }),
  risk: 'write',
  timeoutSec: 30,
  run: async ({ title, text }, ctx) => {
    await appendFile(path.join(ctx.workspace, 'published.log'), `${JSON.stringify({ title, text })}\n`);
    return { note_id: 'N-1', title, published: true };
  },
});

// The script sits beside the sources (examples/web-app/), the build in dist/examples/web-app/.
const SCRIPT = path.resolve(__dirname, '..', '..', '..', 'examples', 'web-app', 'script.json');

/** The one agent the app's sessions run as. */
export const notesAgent = defineAgent({
  name: 'notes',
  instructions: 'You publish short notes for the user with publish_note, then say what you published.',
  model: process.env.HARNESS_MODEL || `scripted:${SCRIPT}`,
  tools: [publishNote],
  // No policy given: mode `ask`, so publish_note (a write) waits for a person each time.
});

/** A worker serving the agent on TASK_QUEUE; run() it, shutdown() to stop. */
export function startWorker(): Promise<HarnessWorker> {
  return createHarnessWorker({
    agents: [notesAgent],
    taskQueue: TASK_QUEUE,
    // Its own home beside the harness home in effect (HARNESS_HOME's or the project's), never
    // that home itself: its embedded database belongs to `harness dev`'s worker.
    home: process.env.EXAMPLE_HOME || `${harnessHome()}-web-app-example`,
  });
}

if (require.main === module) {
  startWorker()
    .then((worker) => worker.run()) // until Ctrl-C
    .catch((err: Error & { hint?: string }) => {
      console.error(`error: ${err.message}${err.hint ? `\nhint: ${err.hint}` : ''}`);
      process.exit(1);
    });
}
