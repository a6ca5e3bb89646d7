// A worker process with two agents, for the sub-agent crash test: built from the package as a
// user's worker is. Agent `lead` hands tasks to `researcher`, whose tool note_fact is not
// idempotent: it appends a line to notes.txt in the session workspace (its side effect) and, when
// asked to be slow, waits a minute, long enough for a test to SIGKILL the process mid-run. Each
// agent's model is the script file its environment variable names.
const { appendFileSync } = require('node:fs');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { z } = require('zod');
const { createHarnessWorker, defineAgent, defineTool } = require('durable-agent-harness');

const noteFact = defineTool({
  name: 'note_fact',
  description: 'Note a fact in the notes file.',
  schema: z.object({ fact: z.string(), slow: z.boolean().optional() }),
  risk: 'read_only',
  idempotent: false,
  timeoutSec: 120,
  run: async ({ fact, slow }, ctx) => {
    appendFileSync(path.join(ctx.workspace, 'notes.txt'), `${ctx.callId} ${fact} pid ${process.pid}\n`);
    if (slow) await sleep(60_000, undefined, { signal: ctx.signal });
    return { noted: fact };
  },
});

const researcher = defineAgent({ name: 'researcher', instructions: 'You research.', model: `scripted:${process.env.RESEARCHER_SCRIPT}`, tools: [noteFact] });
const lead = defineAgent({ name: 'lead', instructions: 'You lead.', model: `scripted:${process.env.LEAD_SCRIPT}`, agents: [researcher] });

createHarnessWorker({ agents: [lead] })
  .then((w) => w.run())
  .catch((err) => {
    process.stderr.write(`error: ${err.message}\n`);
    process.exit(1);
  });
