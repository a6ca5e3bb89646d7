// A worker process with a lead agent and a background sub-agent, for the background crash test:
// built from the package as a user's worker is. The lead starts `researcher` in the background;
// the researcher's tool note_fact is not idempotent: it appends a line to notes.txt in the session
// workspace (its side effect). Each agent's model is the script file its environment variable names.
const { appendFileSync } = require('node:fs');
const path = require('node:path');
const { z } = require('zod');
const { createHarnessWorker, defineAgent, defineTool } = require('durable-agent-harness');

const noteFact = defineTool({
  name: 'note_fact',
  description: 'Note a fact in the notes file.',
  schema: z.object({ fact: z.string() }),
  risk: 'read_only',
  idempotent: false,
  run: async ({ fact }, ctx) => {
    appendFileSync(path.join(ctx.workspace, 'notes.txt'), `${ctx.callId} ${fact} pid ${process.pid}\n`);
    return { noted: fact };
  },
});

const researcher = defineAgent({ name: 'researcher', instructions: 'You research.', model: `scripted:${process.env.RESEARCHER_SCRIPT}`, tools: [noteFact] });
const lead = defineAgent({ name: 'lead', instructions: 'You lead.', model: `scripted:${process.env.LEAD_SCRIPT}`, agents: [{ agent: researcher, background: true }], tools: [noteFact] });

createHarnessWorker({ agents: [lead] })
  .then((w) => w.run())
  .catch((err) => {
    process.stderr.write(`error: ${err.message}\n`);
    process.exit(1);
  });
