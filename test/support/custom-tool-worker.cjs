// A worker process with one custom tool that is not idempotent, for crash tests: built from the
// package as a user's worker is (`require('durable-agent-harness')`: the package's own exports).
// charge_card appends a line to charges.txt in the session workspace (its side effect), then,
// when asked to be slow, waits a minute: long enough for a test to SIGKILL the process mid-run.
const { appendFileSync } = require('node:fs');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { z } = require('zod');
const { createHarnessWorker, defineTool } = require('durable-agent-harness');

const chargeCard = defineTool({
  name: 'charge_card',
  description: 'Charge the card on file. Returns the charge id.',
  schema: z.object({ amount: z.number().positive(), slow: z.boolean().optional() }),
  risk: 'write',
  idempotent: false,
  timeoutSec: 120,
  run: async ({ amount, slow }, ctx) => {
    appendFileSync(path.join(ctx.workspace, 'charges.txt'), `${ctx.callId} ${amount} pid ${process.pid}\n`);
    if (slow) await sleep(60_000, undefined, { signal: ctx.signal });
    return { charge_id: `ch-${ctx.callId}`, amount };
  },
});

createHarnessWorker({ tools: [chargeCard] })
  .then((w) => w.run())
  .catch((err) => {
    process.stderr.write(`error: ${err.message}\n`);
    process.exit(1);
  });
