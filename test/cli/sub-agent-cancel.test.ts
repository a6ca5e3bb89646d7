/**
 * `harness cancel <sub-agent turn id>`, as users run it under the default policy: the sub-agent's
 * turn ends cancelled and its parent goes on, the call failed (`SUB_AGENT_FAILED`: the sub-agent
 * ended cancelled). A sub-agent turn id that names nothing gets one line and a hint.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAgent } from '../../index';
import { HarnessClient } from '../../api/client';
import { startHarness, type TestHarness } from '../support/harness';
import { scriptFiles } from '../support/agent-scripts';
import { cliEnv, describeResult, parseJson, removeTempDirs, runCli, stackLines, tempDir } from '../support/cli';

let h: TestHarness;
let env: NodeJS.ProcessEnv;
let client: HarnessClient;
let dir: string;
const cli = (args: string[]) => runCli(args, { env, timeoutMs: 120_000 });

beforeAll(async () => {
  h = await startHarness();
  dir = tempDir('harness-cli-sub-agent-cancel-');
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(dir, 'home') });
  client = new HarnessClient(h.client, { taskQueue: h.taskQueue, env: {}, cwd: dir });
}, 60_000);
afterAll(async () => {
  await h?.stop();
  removeTempDirs();
});

describe("cancelling a sub-agent's turn", () => {
  it('ends it cancelled; its parent goes on with the call failed', async () => {
    const scriptFile = scriptFiles(dir);
    // The researcher's model answers only after ten minutes: it is cancelled long before.
    const researcher = defineAgent({ name: 'researcher', instructions: 'You are the researcher.', model: scriptFile({ steps: [{ fault: { delay_ms: 600_000 }, content: 'Too late.' }] }) });
    const lead = defineAgent({
      name: 'lead',
      instructions: 'You lead.',
      model: scriptFile({
        steps: [
          { tool_calls: [{ name: 'agent__researcher', arguments: { task: 'Find the answer.' } }] },
          { expect: { last_message_contains: 'researcher ended cancelled' }, content: 'Lead went on.' },
        ],
      }),
      agents: [researcher],
    });
    h.declarations.add({ agents: [lead.spec, researcher.spec] });
    const sent = await client.send('Find it.', { agent: 'lead' });
    const child = `${sent.turnId}/agent-t1-s1-c0`;
    for (let i = 0; i < 600; i++) {
      const running = await h.client.workflow
        .getHandle(child)
        .describe()
        .then((d) => d.status.name === 'RUNNING')
        .catch(() => false);
      if (running) break;
      await new Promise((r) => setTimeout(r, 100));
    }

    const cancelled = await cli(['cancel', child, '--json']);
    expect(cancelled.code, describeResult(cancelled)).toBe(0);
    expect(parseJson(cancelled)).toEqual({ kind: 'turn', session_id: sent.sessionId, turn_id: child, terminated_by: 'cancelled' });
    expect(cancelled.errLines).toEqual([`turn ${child} cancelled`]);

    const done = await client.wait(sent.turnId, { timeoutMs: 60_000 });
    expect(done.kind === 'done' && done.result.answer).toBe('Lead went on.');
    const call = done.kind === 'done' ? done.result.toolCalls.find((c) => c.name === 'agent__researcher') : undefined;
    expect(call).toMatchObject({ ok: false, error_type: 'SUB_AGENT_FAILED' });
    // The child ended as a cancelled turn does: completed, its result saying how (its work kept).
    expect((await h.client.workflow.getHandle(child).result()) as { terminated_by: string }).toMatchObject({ terminated_by: 'cancelled' });
  });

  it('refuses a sub-agent turn id that names nothing, in one line with a hint', async () => {
    const sent = await client.send('Hello.', { model: 'scripted:' + scriptFiles(dir)({ steps: [{ content: 'Hi.' }] }).slice('scripted:'.length) });
    await client.wait(sent.turnId, { timeoutMs: 60_000 });
    const r = await cli(['cancel', `${sent.turnId}/agent-t1-s1-c0`]);
    expect(r.code, describeResult(r)).toBe(1);
    expect(r.errLines).toEqual([`error: turn ${sent.turnId} started no sub-agent turn ${sent.turnId}/agent-t1-s1-c0`, `hint: see its calls with \`harness trace ${sent.turnId}\``]);
    expect(stackLines(r.stderr)).toEqual([]);
  });
});
