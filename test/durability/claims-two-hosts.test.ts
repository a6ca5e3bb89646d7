/**
 * Two workers that share nothing but the database (each its own HARNESS_HOME, as workers on two
 * hosts have) and the task queue: a custom tool that is not idempotent, claimed and started by
 * worker A, is taken over by worker B when A goes (its call in flight cancelled, as a lost worker's
 * attempt times out), and B does not run it again: the claim is in the shared database, so B
 * answers that the call may or may not have taken effect.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { connectHarness, createHarnessWorker, defineTool, type HarnessClient, type HarnessWorker } from '../../index';
import { quietRuntime } from '../support/quiet-runtime';
import { TEST_DATABASE_URL } from '../support/harness';
import { until } from '../support/processes';

/** Which worker ran the charge, in order: the side effect that must happen once. */
const charged: string[] = [];

/** The tool as worker `name` has it; A's never finishes on its own (its worker goes first). */
function chargeCard(name: string) {
  return defineTool({
    name: 'charge_card',
    description: 'Charge the card on file. Returns the charge id.',
    schema: z.object({ amount: z.number().positive() }),
    risk: 'write',
    idempotent: false,
    timeoutSec: 120,
    run: async ({ amount }, ctx) => {
      charged.push(name);
      if (name === 'A') await new Promise(() => undefined);
      return { charge_id: `ch-${ctx.callId}`, amount };
    },
  });
}

const dirs: string[] = [];
const tmp = (prefix: string) => {
  const d = mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(d);
  return d;
};
const queue = `claims-two-hosts-${randomUUID()}`;
// A's calls in flight are cancelled the moment it stops (no drain), as a lost worker's would time out.
const env = () => ({ PATH: process.env.PATH, TEMPORAL_ADDRESS: inject('temporalAddress'), DATABASE_URL: TEST_DATABASE_URL, HARNESS_DRAIN_GRACE_SEC: '0' });

const workers: Array<{ w: HarnessWorker; running: Promise<void> }> = [];
async function startWorker(name: string): Promise<{ w: HarnessWorker; running: Promise<void> }> {
  // Each its own home: no file of one is seen by the other.
  const w = await createHarnessWorker({ tools: [chargeCard(name)], env: env(), taskQueue: queue, home: tmp(`harness-host-${name}-`), log: () => undefined, bundlePath: inject('workflowBundle') });
  const entry = { w, running: w.run() };
  workers.push(entry);
  return entry;
}

let client: HarnessClient | undefined;
afterAll(async () => {
  for (const { w, running } of workers) {
    w.shutdown();
    await running.catch(() => undefined);
  }
  await client?.close();
});

it('a call claimed on one host is not run again on another that shares only the database', async () => {
  quietRuntime();
  const a = await startWorker('A');
  client = await connectHarness({ env: env(), taskQueue: queue, cwd: tmp('harness-claims-cwd-') });
  const script = path.join(tmp('harness-claims-script-'), 'script.json');
  writeFileSync(
    script,
    JSON.stringify({
      steps: [
        { tool_calls: [{ name: 'charge_card', arguments: { amount: 5 } }] },
        { expect: { last_message_contains: 'may or may not have taken effect' }, content: 'I cannot tell whether the charge went through. DONE' },
      ],
    }),
  );
  const sent = await client.send('charge 5 euros', { model: `scripted:${script}` });
  const asked = await client.wait(sent.turnId, { timeoutMs: 60_000 });
  if (asked.kind !== 'waiting' || asked.state.pending?.kind !== 'approvals') throw new Error(`the charge should ask first: ${JSON.stringify(asked)}`);
  await client.approve(sent.sessionId);
  await until('the charge on A', () => charged.length > 0);

  // B joins, then A goes with the call in flight: its retry can only go to B.
  await startWorker('B');
  a.w.shutdown();
  await a.running;

  const out = await client.wait(sent.turnId, { timeoutMs: 90_000 });
  expect(out.kind).toBe('done');
  if (out.kind !== 'done') return;
  expect(out.result.answer).toContain('DONE');
  expect(out.result.toolCalls.map((c) => [c.name, c.ok, c.error_type])).toEqual([['charge_card', false, 'EXECUTION_ERROR']]);
  expect(charged).toEqual(['A']);
}, 150_000);
