/**
 * `harness trace --otlp` and `harness dev` with OTEL_EXPORTER_OTLP_ENDPOINT against a real
 * OpenTelemetry receiver: Arize Phoenix from PyPI (scripts/setup-phoenix.sh puts it in .venv),
 * started offline on free ports in a temp working dir. Spans are read back through Phoenix's
 * REST API and compared with `harness trace --json`: same trace and span ids, same parent links,
 * span kinds, model, tokens, tool names and session. Missing Phoenix is a failure, not a skip.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerQuestion, decideApprovals } from '../../client/session-client';
import { waitForTurn, type TurnOutcome } from '../../client/turn-wait';
import { exportClosedTurns, exportedFile, type FollowOptions } from '../../client/otlp-export';
import { otlpTracesUrl } from '../../history/trace/otlp-endpoint';
import { traceId } from '../../history/trace/types';
import { DEFAULT_POLICY, newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';
import { cliEnv, describeResult, removeTempDirs, runCli, spawnCli, stackLines, stopChild, tempDir, writeScript } from '../support/cli';
import { isolatedEmbeddedEnv, killDeployment } from '../support/embedded-procs';
import { phoenixSpans, startPhoenix, type Phoenix } from '../support/phoenix';
import { freePort } from '../../scripts/free-port';

/** A span of `harness trace --json`. */
type JsonSpan = { trace_id: string; span_id: string; parent_id: string | null; type: string; name: string; session_id: string; output: Record<string, unknown> | null };


let h: TestHarness;
let env: NodeJS.ProcessEnv;
let phoenix: Phoenix | undefined;
const sessionId = newSessionId('cli-otlp');
const cli = (args: string[], extra: Record<string, string> = {}) => runCli(['trace', ...args], { env: { ...env, ...extra }, timeoutMs: 60_000 });



/** Runs a turn, approving each call the policy asks about and answering each question. */
async function runApproving(session: string, script: unknown, text: string): Promise<void> {
  await settle(session, await h.turn(session, scriptedConfig(script, {}, DEFAULT_POLICY), text));
}

/** Approves and answers what a turn waits for until it is done. */
async function settle(session: string, outcome: TurnOutcome): Promise<void> {
  let out = outcome;
  while (out.kind === 'waiting') {
    const p = out.state.pending!;
    if (p.kind === 'approvals') await decideApprovals(h.client, session, { calls: p.calls.map((c) => ({ callId: c.callId, digest: c.digest ?? '' })), approve: true });
    else await answerQuestion(h.client, session, 'blue');
    out = await waitForTurn(h.client, out.state.turnId, { pollMs: 100 });
  }
  expect(out.result.terminated_by).toBe('final_answer');
}

beforeAll(async () => {
  [h, phoenix] = await Promise.all([startHarness(), startPhoenix()]);
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(tempDir('harness-cli-otlp-'), 'home') });
  // A model call, a read-only call, a call a human approves, a question answered, a failed call.
  await runApproving(
    sessionId,
    {
      steps: [
        { tool_calls: [{ name: 'get_current_time', arguments: {} }, { name: 'write_file', arguments: { path: 'a.txt', content: 'hello' } }] },
        { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }] },
        { tool_calls: [{ name: 'read_file', arguments: { path: '../outside.txt' } }] },
        { content: 'Exported. HARNESS_OK' },
      ],
    },
    'write a.txt, ask, read outside',
  );
}, 180_000);
afterAll(async () => {
  await stopChild(phoenix?.child, 'SIGTERM');
  await h?.stop();
  removeTempDirs();
});

describe('harness trace --otlp to Phoenix', () => {
  it('exports every span with our ids and links, as AGENT / LLM / TOOL spans with model, tokens, tools and session', async () => {
    const json = await cli([sessionId, '--json']);
    expect(json.code, describeResult(json)).toBe(0);
    const ours = json.stdout.trim().split('\n').map((l) => JSON.parse(l) as JsonSpan);
    expect(ours.map((s) => s.type)).toEqual(expect.arrayContaining(['turn', 'step', 'llm_call', 'tool_call', 'approval', 'ask_user']));

    const r = await cli([sessionId, '--otlp', phoenix!.base]);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.errLines).toEqual([`exported ${ours.length} spans of ${sessionId} to ${phoenix!.base}/v1/traces`]);

    const trace = ours[0]!.trace_id;
    expect(trace).toBe(traceId(sessionId));
    const got = await phoenixSpans(phoenix!, trace, ours.length);
    expect(got).toHaveLength(ours.length);
    const byId = new Map(got.map((s) => [s.context.span_id, s]));
    for (const s of ours) {
      const p = byId.get(s.span_id);
      expect(p, `span ${s.type} ${s.name} (${s.span_id}) in Phoenix`).toBeDefined();
      expect(p!.context.trace_id).toBe(trace);
      expect(p!.parent_id).toBe(s.parent_id);
      expect(p!.attributes['session.id']).toBe(sessionId);
      expect(p!.attributes['harness.span.type']).toBe(s.type);
    }

    const kind = (type: string) => ours.filter((s) => s.type === type).map((s) => byId.get(s.span_id)!);
    const [turn] = kind('turn');
    expect(turn).toMatchObject({ name: `invoke_agent ${sessionId}/turn-1`, span_kind: 'AGENT', status_code: 'OK', parent_id: null });
    expect(turn!.attributes).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.conversation.id': sessionId, 'gen_ai.agent.name': 'harness' });

    const llms = kind('llm_call');
    expect(llms).toHaveLength(4);
    for (const [i, l] of llms.entries()) {
      const usage = ours.filter((s) => s.type === 'llm_call')[i]!.output!.usage as { prompt_tokens: number; completion_tokens: number };
      expect(l).toMatchObject({ name: 'chat scripted', span_kind: 'LLM' });
      expect(l.attributes).toMatchObject({
        'llm.model_name': 'scripted',
        'llm.token_count.prompt': usage.prompt_tokens,
        'llm.token_count.completion': usage.completion_tokens,
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'scripted',
        'gen_ai.usage.input_tokens': usage.prompt_tokens,
        'gen_ai.usage.output_tokens': usage.completion_tokens,
      });
    }

    const tools = kind('tool_call');
    expect(tools.map((t) => t.attributes['tool.name'])).toEqual(['get_current_time', 'write_file', 'ask_user', 'read_file']);
    for (const t of tools) {
      expect(t.span_kind).toBe('TOOL');
      expect(t.name).toBe(`execute_tool ${String(t.attributes['tool.name'])}`);
      expect(t.attributes['gen_ai.tool.name']).toBe(t.attributes['tool.name']);
      expect(t.attributes['gen_ai.tool.call.id']).toMatch(/^t1-s\d-c\d$/);
    }
    // The default policy refuses a path outside the workspace before the tool runs.
    const refused = ours.filter((s) => s.type === 'tool_call')[3]!;
    expect(refused.output).toMatchObject({ ok: false, error_type: 'PERMISSION_DENIED' });
    expect(tools[3]).toMatchObject({ status_code: 'ERROR', attributes: { 'error.type': 'PERMISSION_DENIED', 'harness.policy.decision': 'deny' } });
    expect(tools[1]!.attributes).toMatchObject({ 'harness.policy.decision': 'ask', 'harness.approval.approved': true });
    expect(kind('approval')[0]).toMatchObject({ name: 'approval write_file', span_kind: 'CHAIN', parent_id: tools[1]!.context.span_id });
    expect(kind('ask_user')[0]).toMatchObject({ span_kind: 'CHAIN', parent_id: tools[2]!.context.span_id });

    // Phoenix groups the trace under the session, with the tokens of its model calls.
    const sessions = (await (await fetch(`${phoenix!.base}/v1/projects/default/sessions`)).json()) as { data: { session_id: string; traces: { trace_id: string }[]; token_count_total: number }[] };
    const session = sessions.data.find((s) => s.session_id === sessionId);
    expect(session?.traces.map((t) => t.trace_id)).toEqual([trace]);
    expect(session?.token_count_total).toBe((ours[0]!.output!.usage as { total_tokens: number }).total_tokens);
  });

  it('a turn waiting for approval sends what has ended; exported again once closed, the trace is whole', async () => {
    const waiting = newSessionId('cli-otlp-wait');
    const script = { steps: [{ tool_calls: [{ name: 'write_file', arguments: { path: 'b.txt', content: 'b' } }] }, { content: 'HARNESS_OK' }] };
    const out = await h.turn(waiting, scriptedConfig(script, {}, DEFAULT_POLICY), 'write b.txt');
    expect(out.kind).toBe('waiting');

    // Ended: the model call. Running: the turn, its step, the call and its approval.
    const early = await cli([waiting, '--otlp', phoenix!.base]);
    expect(early.code, describeResult(early)).toBe(0);
    expect(early.errLines).toEqual([`exported 1 spans of ${waiting} to ${phoenix!.base}/v1/traces (4 still running, not exported: export again once the turn has closed)`]);
    expect((await phoenixSpans(phoenix!, traceId(waiting), 1)).map((s) => s.span_kind)).toEqual(['LLM']);

    await settle(waiting, out);
    const json = await cli([waiting, '--json']);
    const ours = json.stdout.trim().split('\n').map((l) => JSON.parse(l) as JsonSpan);
    const late = await cli([waiting, '--otlp', phoenix!.base]);
    expect(late.errLines).toEqual([`exported ${ours.length} spans of ${waiting} to ${phoenix!.base}/v1/traces`]);
    const got = await phoenixSpans(phoenix!, traceId(waiting), ours.length);
    expect(got.map((s) => s.context.span_id).sort()).toEqual(ours.map((s) => s.span_id).sort());
    expect(got.find((s) => s.span_kind === 'AGENT')).toMatchObject({ status_code: 'OK', parent_id: null });
  });

  it('an unreachable receiver is one error line and a hint, exit 1, no stack', async () => {
    const port = await freePort();
    // The exporter retries a refused connection within its timeout: keep that short here.
    const r = await cli([sessionId, '--otlp', `http://127.0.0.1:${port}`], { OTEL_EXPORTER_OTLP_TIMEOUT: '2000' });
    expect(r.code, describeResult(r)).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.errLines).toHaveLength(2);
    expect(r.errLines[0]).toBe(`error: cannot send the trace to http://127.0.0.1:${port}/v1/traces: ECONNREFUSED`);
    expect(r.errLines[1]).toMatch(/^hint: is the receiver running/);
    expect(stackLines(r.stderr)).toEqual([]);
  });

  it('a receiver that answers non-2xx is one error line with the status; a bad URL, or --follow, is a usage error', async () => {
    const r = await cli([sessionId, '--otlp', `${phoenix!.base}/not-otlp/v1/traces`]);
    expect(r.code, describeResult(r)).toBe(1);
    expect(r.errLines[0]).toMatch(new RegExp(`^error: the OTLP receiver at ${phoenix!.base}/not-otlp/v1/traces answered 4\\d\\d `));
    expect(stackLines(r.stderr)).toEqual([]);

    const bad = await cli([sessionId, '--otlp', 'ftp://127.0.0.1:6006']);
    expect(bad.code, describeResult(bad)).toBe(2);
    expect(bad.errLines[0]).toMatch(/^error: .*expected an http:\/\/ or https:\/\/ URL/);

    // Following is not exporting: said, not silently ignored.
    const following = await cli([sessionId, '--otlp', `${phoenix!.base}/v1/traces`, '--follow']);
    expect(following.code, describeResult(following)).toBe(2);
    expect(following.errLines).toEqual(['error: --follow cannot be combined with --otlp: an export sends the trace as it stands', expect.stringMatching(/^hint: `harness dev` with OTEL_EXPORTER_OTLP_ENDPOINT/)]);
  });
});

describe('continuous export (what `harness dev` runs with OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  it('exports each closed turn once, remembers it across restarts, and retries after a failed export', async () => {
    const home = tempDir('harness-otlp-follow-');
    const opts = (url: URL): FollowOptions => ({ client: h.client, url, home, taskQueue: h.taskQueue, env: {}, log: () => undefined });
    const other = newSessionId('cli-otlp-follow');
    // The script goes on across the session's turns: its last step answers the second turn.
    const script = { steps: [{ tool_calls: [{ name: 'get_current_time', arguments: {} }] }, { content: 'HARNESS_OK' }, { content: 'again HARNESS_OK' }] };
    await runApproving(other, script, 'what time is it');

    // A receiver that says no: nothing is marked as sent.
    const wrong = await exportClosedTurns(opts(otlpTracesUrl(`${phoenix!.base}/not-otlp`)));
    expect(wrong.exported).toEqual([]);
    expect(wrong.error).toMatch(/answered 4\d\d/);

    const url = otlpTracesUrl(phoenix!.base);
    const first = await exportClosedTurns(opts(url));
    expect(first.error).toBeUndefined();
    // Every closed turn of the queue, this file's other sessions included, each once.
    const firstIds = first.exported.map((t) => t.turnId);
    expect(firstIds).toEqual(expect.arrayContaining([`${other}/turn-1`, `${sessionId}/turn-1`]));
    expect(new Set(firstIds).size).toBe(firstIds.length);
    const spans = await phoenixSpans(phoenix!, traceId(other), first.exported.find((t) => t.turnId === `${other}/turn-1`)!.spans);
    expect(spans.map((s) => s.span_kind).sort()).toEqual(['AGENT', 'CHAIN', 'CHAIN', 'LLM', 'LLM', 'TOOL']);

    // The next pass (or a restarted dev reading the same file) sends nothing again.
    expect((await exportClosedTurns(opts(url))).exported).toEqual([]);
    const state = JSON.parse(readFileSync(exportedFile(home), 'utf8')) as Record<string, { done: Record<string, number> }>;
    expect(Object.keys(state[url.href]!.done)).toHaveLength(firstIds.length);

    // A new turn is the only one the next pass sends.
    await runApproving(other, script, 'once more');
    expect((await exportClosedTurns(opts(url))).exported.map((t) => t.turnId)).toEqual([`${other}/turn-2`]);
  }, 120_000);

  it('`harness dev` with an OTLP endpoint that is not http(s) is a usage error before anything starts', async () => {
    const scratch = tempDir('harness-dev-otlp-bad-');
    const devEnv = await isolatedEmbeddedEnv(path.join(scratch, 'home'), { OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://127.0.0.1:4317' });
    const r = await runCli(['dev'], { env: devEnv, cwd: scratch, timeoutMs: 30_000 });
    expect(r.code, describeResult(r)).toBe(2);
    expect(r.errLines[0]).toBe('error: OTEL_EXPORTER_OTLP_ENDPOINT: expected an http:// or https:// URL, not grpc:');
    expect(existsSync(path.join(scratch, 'home', 'temporal.db'))).toBe(false);
  });

  it('`harness dev` exports a turn `harness run` ran once it closes', async () => {
    const scratch = tempDir('harness-dev-otlp-');
    const home = path.join(scratch, 'home');
    const devEnv = await isolatedEmbeddedEnv(home, { OTEL_EXPORTER_OTLP_ENDPOINT: phoenix!.base });
    const dev = spawnCli(['dev'], { env: devEnv, cwd: scratch });
    let out = '';
    dev.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    dev.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    try {
      for (let i = 0; i < 900 && !/worker ready/.test(out) && dev.exitCode === null; i++) await sleep(200);
      expect(out, `harness dev should report its worker ready:\n${out}`).toMatch(/worker ready/);
      expect(out).toContain(`exporting each turn to ${phoenix!.base}/v1/traces once it closes`);

      const session = newSessionId('cli-otlp-dev');
      const script = writeScript(scratch, { steps: [{ tool_calls: [{ name: 'get_current_time', arguments: {} }] }, { content: 'HARNESS_OK' }] });
      const run = await runCli(['run', '--model', `scripted:${script}`, '--session', session, '--json', 'what time is it'], { env: devEnv, cwd: scratch, timeoutMs: 120_000 });
      expect(run.code, describeResult(run)).toBe(0);

      const spans = await phoenixSpans(phoenix!, traceId(session), 6);
      expect(spans.find((s) => s.span_kind === 'AGENT')?.name).toBe(`invoke_agent ${session}/turn-1`);
      for (let i = 0; i < 100 && !out.includes(`of ${session}/turn-1`); i++) await sleep(100);
      expect(out).toContain(`otlp: exported 6 spans of ${session}/turn-1 to ${phoenix!.base}/v1/traces`);
    } finally {
      await stopChild(dev, 'SIGINT', 20_000);
      await killDeployment(home);
    }
  }, 240_000);
});
