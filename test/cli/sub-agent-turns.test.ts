/**
 * A sub-agent's turn (`<turnId>/agent-<callId>`) through the CLI as users run it, under the
 * default policy: `trace` shows its own spans, `replay` replays its history, `fork` goes on from
 * one of its steps in a new session running as the sub-agent, `rerun` reproduces it, and `retry`
 * of a terminated one goes on as a new session of the sub-agent (its result went to the parent
 * turn already), with its earlier model and tool calls taken from the record. Bad ids get one
 * line and a hint.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAgent } from '../../index';
import { HarnessClient } from '../../api/client';
import { newSessionId, startHarness, type TestHarness } from '../support/harness';
import { factTools } from '../support/fact-tools';
import { scriptFiles } from '../support/agent-scripts';
import { cliEnv, describeResult, parseJson, removeTempDirs, runCli, stackLines, tempDir } from '../support/cli';

const { runs, lookup, file } = factTools();

let h: TestHarness;
let env: NodeJS.ProcessEnv;
let client: HarnessClient;
let dir: string;
const cli = (args: string[]) => runCli(args, { env, timeoutMs: 120_000 });
type SpanLine = { type: string; name: string; status: string };
const spansOf = (stdout: string) => stdout.trim().split('\n').map((l) => JSON.parse(l) as SpanLine);

beforeAll(async () => {
  h = await startHarness({ tools: [lookup, file] });
  dir = tempDir('harness-cli-sub-agent-turns-');
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(dir, 'home') });
  client = new HarnessClient(h.client, { taskQueue: h.taskQueue, env: {}, cwd: dir });
}, 60_000);
afterAll(async () => {
  await h?.stop();
  removeTempDirs();
});

describe("a sub-agent's turn through the CLI", () => {
  it('trace, replay, fork, rerun and retry take its id; a done one is not retried, a terminated one goes on in a new session of the sub-agent', async () => {
    runs.length = 0;
    const scriptFile = scriptFiles(dir);
    const researcher = defineAgent({
      name: 'researcher',
      instructions: 'You are the researcher.',
      model: scriptFile({
        steps: [
          { expect: { system_contains: 'You are the researcher.' }, tool_calls: [{ name: 'look_fact', arguments: { topic: 'answer' } }] },
          { expect: { system_contains: 'You are the researcher.', last_message_contains: 'answer is 42' }, content: 'The answer is 42.' },
        ],
      }),
      tools: [lookup],
    });
    const clerk = defineAgent({
      name: 'clerk',
      instructions: 'You are the clerk.',
      model: scriptFile({
        steps: [
          { tool_calls: [{ name: 'look_fact', arguments: { topic: 'note' } }] },
          { tool_calls: [{ name: 'file_note', arguments: { note: 'n-1' } }] },
          { expect: { system_contains: 'You are the clerk.', last_message_contains: 'n-1' }, content: 'Filed n-1. HARNESS_OK' },
        ],
      }),
      tools: [lookup, file],
    });
    const lead = defineAgent({
      name: 'lead',
      instructions: 'You lead.',
      model: scriptFile({
        steps: [
          { tool_calls: [{ name: 'agent__researcher', arguments: { task: 'Find the answer.' } }] },
          { tool_calls: [{ name: 'agent__clerk', arguments: { task: 'File n-1.' } }] },
          { content: 'Lead went on.' },
        ],
      }),
      agents: [researcher, clerk],
    });
    h.declarations.add({ agents: [lead.spec, researcher.spec, clerk.spec] });
    const sent = await client.send('Find it and file it.', { agent: 'lead' });
    const found = `${sent.turnId}/agent-t1-s1-c0`;
    const filing = `${sent.turnId}/agent-t1-s2-c0`;

    // The clerk waits for approval of file_note; an operator stops its turn, and the lead goes on.
    const waiting = await client.wait(sent.turnId, { timeoutMs: 60_000 });
    expect(waiting.kind).toBe('waiting');
    await h.client.workflow.getHandle(filing).terminate('an operator stopped it');
    const done = await client.wait(sent.turnId, { timeoutMs: 60_000 });
    expect(done.kind === 'done' && done.result.answer).toBe('Lead went on.');
    expect(runs).toEqual(['look_fact answer', 'look_fact note']);

    // trace: the child's own spans (its steps, model and tool calls), not its parent's.
    const trace = await cli(['trace', found, '--json']);
    expect(trace.code, describeResult(trace)).toBe(0);
    const spans = spansOf(trace.stdout);
    expect(spans.filter((s) => s.type === 'step')).toHaveLength(2);
    expect(spans.filter((s) => s.type === 'llm_call').map((s) => s.status)).toEqual(['ok', 'ok']);
    expect(spans.filter((s) => s.type === 'tool_call').map((s) => s.name)).toEqual(['look_fact']);
    const text = await cli(['trace', found]);
    expect(text.code, describeResult(text)).toBe(0);
    expect(text.stdout).toContain('look_fact');
    expect(text.stdout).not.toContain('agent__clerk');

    // cost: the child's own turn, two model calls (its parent's calls are not in it).
    const cost = await cli(['cost', found, '--json']);
    expect(cost.code, describeResult(cost)).toBe(0);
    expect(parseJson<{ kind: string; id: string; by_kind: { model: { calls: number } } }>(cost)).toMatchObject({ kind: 'turn', id: found, by_kind: { model: { calls: 2 } } });

    // --follow: the spans so far, then it has closed.
    const follow = await cli(['trace', found, '--follow']);
    expect(follow.code, describeResult(follow)).toBe(0);
    expect(follow.errLines.at(-1)).toBe(`${found} has closed`);

    // replay: the child's history against the current code.
    const replay = await cli(['replay', found]);
    expect(replay.code, describeResult(replay)).toBe(0);
    expect(replay.stdout.trim()).toBe(`sub-agent turn (${found}), run 1 of 1: OK`);
    // The session's replay goes down to its sub-agents' turns.
    const whole = await cli(['replay', sent.sessionId, '--json']);
    expect(whole.code, describeResult(whole)).toBe(0);
    expect(new Set(parseJson<{ runs: { workflow_id: string }[] }>(whole).runs.map((r) => r.workflow_id))).toEqual(new Set([sent.sessionId, sent.turnId, found, filing]));

    // fork: a new session running as the researcher (its instructions, tools, model) from step 2.
    const fork = await cli(['fork', found, '--at-step', '2', '--json']);
    expect(fork.code, describeResult(fork)).toBe(0);
    expect(fork.errLines[0]).toMatch(/^forked \S+\/agent-t1-s1-c0 at step 2 into session \S+, running as sub-agent lead › researcher: step 1 taken from the record \(1 model call not made\)$/);
    expect(parseJson(fork)).toMatchObject({ terminated_by: 'final_answer', answer: 'The answer is 42.' });

    // rerun: the recorded replies again, the custom tool answered from the record.
    const rerun = await cli(['rerun', found, '--json']);
    expect(rerun.code, describeResult(rerun)).toBe(0);
    expect(parseJson(rerun)).toMatchObject({ terminated_by: 'final_answer', rerun: { diverged: false } });
    expect(runs).toEqual(['look_fact answer', 'look_fact note']);

    // retry of a child that answered: nothing to retry.
    const answered = await cli(['retry', found]);
    expect(answered.code).toBe(1);
    expect(answered.errLines).toEqual([
      expect.stringMatching(/^error: turn \S+\/agent-t1-s1-c0 ended with final_answer, not a failure: there is nothing to retry$/),
      expect.stringMatching(/^hint: .*harness fork \S+\/agent-t1-s1-c0 --at-step N/),
    ]);

    // retry of the terminated child: its result went to the lead already, so it goes on as a new
    // session of the clerk from step 2; step 1's model call and look_fact are not made again.
    const retry = await cli(['retry', filing, '--no-wait', '--json']);
    expect(retry.code, describeResult(retry)).toBe(0);
    expect(retry.errLines[0]).toMatch(
      /^retrying \S+\/agent-t1-s2-c0 from step 2 \(it was terminated: an operator stopped it\) as the new session (\S+) of sub-agent lead › clerk: its result went to \S+\/turn-1 already and is not given to it again; step 1 taken from the record \(1 model call and 1 tool call not repeated\)$/,
    );
    const planned = parseJson(retry);
    expect(planned).toMatchObject({ retry_of: filing, parent_turn_id: sent.turnId, step: 2, kept: { steps: 1, modelCalls: 1, toolCalls: 1 } });
    const session = planned.session_id as string;
    expect(planned.turn_id).toBe(`${session}/turn-1`);
    const approve = await cli(['approve', session, 't1-s2-c0']);
    expect(approve.code, describeResult(approve)).toBe(0);
    expect(approve.stdout).toContain('Filed n-1. HARNESS_OK');
    expect(runs).toEqual(['look_fact answer', 'look_fact note', 'file_note n-1']);
    // The terminated child itself is as it was: retried, it would be the same new session again.
    expect((await h.client.workflow.getHandle(filing).describe()).status.name).toBe('TERMINATED');
  }, 300_000);

  it("takes a sub-agent's sub-agent's turn: trace it, fork it as that sub-agent", async () => {
    runs.length = 0;
    const scriptFile = scriptFiles(dir);
    const inner = defineAgent({
      name: 'inner',
      instructions: 'You are the inner one.',
      model: scriptFile({
        steps: [
          { tool_calls: [{ name: 'look_fact', arguments: { topic: 'depth' } }] },
          { expect: { system_contains: 'You are the inner one.', last_message_contains: 'depth is 42' }, content: 'Depth is 42.' },
        ],
      }),
      tools: [lookup],
    });
    const middle = defineAgent({
      name: 'middle',
      instructions: 'You pass it on.',
      model: scriptFile({ steps: [{ tool_calls: [{ name: 'agent__inner', arguments: { task: 'How deep?' } }] }, { content: 'Inner says 42.' }] }),
      agents: [inner],
    });
    const top = defineAgent({
      name: 'top',
      instructions: 'You start.',
      model: scriptFile({ steps: [{ tool_calls: [{ name: 'agent__middle', arguments: { task: 'Ask inner.' } }] }, { content: 'Top done.' }] }),
      agents: [middle],
    });
    h.declarations.add({ agents: [top.spec, middle.spec, inner.spec] });
    const out = await client.run('Go deep.', { agent: 'top' });
    expect(out.kind === 'done' && out.result!.answer).toBe('Top done.');
    const nested = `${out.turnId}/agent-t1-s1-c0/agent-t1-s1-c0`;

    const trace = await cli(['trace', nested, '--json']);
    expect(trace.code, describeResult(trace)).toBe(0);
    expect(spansOf(trace.stdout).filter((s) => s.type === 'tool_call').map((s) => s.name)).toEqual(['look_fact']);
    const fork = await cli(['fork', nested, '--at-step', '2', '--json']);
    expect(fork.code, describeResult(fork)).toBe(0);
    expect(fork.errLines[0]).toMatch(/, running as sub-agent top › middle › inner: step 1 taken from the record/);
    expect(parseJson(fork)).toMatchObject({ terminated_by: 'final_answer', answer: 'Depth is 42.' });
    expect(runs).toEqual(['look_fact depth']);
  }, 300_000);

  it('a malformed sub-agent turn id, or one naming no workflow, is one line and a hint', async () => {
    for (const cmd of [['trace'], ['replay'], ['retry'], ['fork', '--at-step', '1'], ['rerun'], ['cost']]) {
      const bad = await cli([...cmd.slice(0, 1), 's-1/turn-1/agent-', ...cmd.slice(1)]);
      expect(bad.code, describeResult(bad)).toBe(2);
      expect(bad.stderr).toMatch(/a sub-agent's turn \(<session>\/turn-N\/agent-<call id>/);
      expect(stackLines(bad.stderr)).toEqual([]);
    }
    const missing = `${newSessionId('nope')}/turn-1/agent-t1-s1-c0`;
    for (const cmd of [['trace'], ['replay'], ['retry'], ['fork', '--at-step', '1'], ['rerun'], ['cost']]) {
      const r = await cli([...cmd.slice(0, 1), missing, ...cmd.slice(1)]);
      expect(r.code, describeResult(r)).toBe(1);
      expect(r.errLines).toEqual([`error: no sub-agent turn ${missing} in Temporal`, expect.stringMatching(/^hint: `harness trace \S+\/turn-1` names the sub-agents' turns its calls started/)]);
      expect(stackLines(r.stderr)).toEqual([]);
    }
  }, 300_000);
});
