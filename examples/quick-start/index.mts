import { z } from 'zod';
import { connectHarness, createHarnessWorker, defineAgent, defineTool, harnessHome } from 'durable-agent-harness';

const refundOrder = defineTool({
  name: 'refund_order',
  description: 'Refund a delivered order in full. Returns the refund id.',
  schema: z.object({ order_id: z.string() }),
  risk: 'write', // the default policy asks a person before it runs
  run: async ({ order_id }) => ({ refund_id: `R-${order_id}` }),
});
const support = defineAgent({ name: 'support', instructions: 'You resolve orders of our shop.', model: 'gpt-4o-mini', tools: [refundOrder] });

// The worker runs the agent's turns; its own home keeps it apart from the CLI's worker.
const worker = await createHarnessWorker({ agents: [support], taskQueue: 'shop', home: `${harnessHome()}-shop` });
const running = worker.run();

// Any process that reaches Temporal: start a session, follow its events, decide its approvals.
const harness = await connectHarness({ taskQueue: 'shop' });
const turn = await harness.send('Order A-1001 arrived broken, please refund it', { agent: 'support' });
for await (const ev of turn.events()) {
  if (ev.type === 'approval_needed') await harness.approve(turn.sessionId, { callIds: [ev.callId] }); // ask a person here
  if (ev.type === 'final') console.log(ev.answer ?? ev.error);
}
await harness.close();
worker.shutdown();
await running;
