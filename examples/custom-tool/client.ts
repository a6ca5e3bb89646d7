/**
 * A tiny client: asks the agent for a refund, shows what it wants to do, approves it when run
 * with --yes (a real app asks a person), and prints the answer and how to see the trace.
 *
 *   node dist/examples/custom-tool/client.js [--yes] ["task"]
 *
 * Offline by default (a scripted model, examples/custom-tool/script.json); set HARNESS_MODEL
 * (and OPENAI_API_KEY on the worker) for a real one.
 */
import path from 'node:path';
import { connectHarness } from 'durable-agent-harness';
import { TASK_QUEUE } from './worker';

async function main(argv: string[]): Promise<number> {
  const yes = argv.includes('--yes');
  const task = argv.filter((a) => a !== '--yes')[0] ?? 'Order A-1001 arrived broken. Please refund it.';
  const script = path.resolve(__dirname, '..', '..', '..', 'examples', 'custom-tool', 'script.json');
  const harness = await connectHarness({ taskQueue: TASK_QUEUE });
  try {
    let out = await harness.run(task, {
      ...(process.env.HARNESS_MODEL ? {} : { model: `scripted:${script}` }),
      // The session fails at once, naming them, if the worker that takes it lacks these.
      requireTools: ['lookup_order', 'refund_order'],
    });
    console.log(`session ${out.sessionId}`);
    while (out.kind === 'waiting') {
      const pending = out.state.pending!;
      if (pending.kind === 'question') {
        console.log(`the agent asks: ${pending.question}\nanswer with: npx harness answer ${out.sessionId} "<answer>"`);
        return 3;
      }
      if (pending.kind !== 'approvals') {
        // Anything else a session may wait on, as `harness status` tells it.
        console.log(`the session waits (${(pending as { kind: string }).kind}); see: npx harness status ${out.sessionId}`);
        return 3;
      }
      for (const call of pending.calls) console.log(`the agent wants to run ${call.tool} ${JSON.stringify(call.args)} (${call.reason})`);
      if (!yes) {
        console.log(`approve with: HARNESS_TASK_QUEUE=${TASK_QUEUE} npx harness approve ${out.sessionId}   (or run this client with --yes)`);
        return 3;
      }
      const { turnId } = await harness.approve(out.sessionId);
      console.log('approved');
      out = { ...out, ...(await harness.wait(turnId)) };
    }
    console.log(out.result.answer);
    console.log(`trace: npx harness trace ${out.sessionId}`);
    return out.result.terminated_by === 'failed' ? 1 : 0;
  } finally {
    await harness.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: Error & { hint?: string }) => {
    console.error(`error: ${err.message}${err.hint ? `\nhint: ${err.hint}` : ''}`);
    process.exit(1);
  },
);
