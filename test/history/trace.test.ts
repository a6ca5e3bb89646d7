/**
 * `harness trace` rebuilds a turn's story from Temporal history alone: a real turn with every
 * span type (a model retry, allowed, denied, invalid and failing tool calls, an MCP call, an
 * approval, a question, a compression), a turn whose worker is SIGKILLed mid-step (traced while
 * it is down, and again once a new worker finished it), and the histories stored for replay.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { Client } from '@temporalio/client';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEFAULT_COMPRESSION } from '../../deterministic/context/plan';
import { Database } from '../../activities/memory/database';
import { answerQuestion, decideApprovals, sendMessage } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { modelProgress } from '../../client/model-progress';
import { loadTrace, type Trace } from '../../history/trace';
import { decodeEvents } from '../../history/trace/events';
import { renderTrace } from '../../history/trace/render';
import { readTimeline } from '../../history/trace/timeline';
import { buildTurnSpans } from '../../history/trace/turn-spans';
import { traceId, type Span } from '../../history/trace/types';
import { escapeForTerminal } from '../../machine/terminal/escape';
import { startScriptedModel } from '../../scripted-model/server';
import { DEFAULT_POLICY, endpointConfig, newSessionId, scriptedConfig, startHarness, TEST_DATABASE_URL, type TestHarness } from '../support/harness';
import { everythingStdio } from '../support/mcp-servers';
import { kill, spawnWorker } from '../support/processes';
import { cliEnv } from '../support/cli';

let h: TestHarness;
let memory: Database;
beforeAll(async () => {
  // recall runs against the test Postgres (not an embedded database started for this file).
  memory = new Database({ home: mkdtempSync(path.join(os.tmpdir(), 'harness-trace-mem-')), databaseUrl: TEST_DATABASE_URL });
  h = await startHarness({ memory });
});
afterAll(async () => {
  await h?.stop();
  await memory?.close();
});

const text = (t: Trace, full = false) => renderTrace(t, { full, color: false, escape: escapeForTerminal });
const spans = (t: Trace): Span[] => t.spans.map((s) => s.span);

/** Every span names the trace and session, has a known type, and a parent within the trace of the right type. */
function expectConsistent(list: Span[], sessionId: string): void {
  const byId = new Map(list.map((s) => [s.span_id, s]));
  expect(byId.size, 'span ids are unique').toBe(list.length);
  const parentType: Record<string, string[]> = {
    turn: [],
    step: ['turn'],
    llm_call: ['step'],
    compress: ['step'],
    tool_call: ['step'],
    approval: ['tool_call'],
    ask_user: ['tool_call'],
    // A wait for budget belongs to the step whose model call waited.
    budget: ['step'],
    // A `wait` call's sleep is under the call; a message sent while the turn ran, under the turn.
    wait: ['tool_call'],
    message: ['turn'],
  };
  for (const s of list) {
    expect(s.trace_id).toBe(traceId(sessionId));
    expect(s.session_id).toBe(sessionId);
    expect(Object.keys(parentType)).toContain(s.type);
    if (s.type === 'turn') expect(s.parent_id).toBeNull();
    else expect(parentType[s.type], `${s.type} ${s.name}`).toContain(byId.get(s.parent_id ?? '')?.type);
    expect(JSON.parse(JSON.stringify(s))).toEqual(s);
    if (s.status !== 'running') {
      expect(s.start, `${s.type} ${s.name} start`).not.toBeNull();
      if (s.end) expect(Date.parse(s.end), `${s.type} ${s.name}: ${s.start} → ${s.end}`).toBeGreaterThanOrEqual(Date.parse(s.start!));
    }
  }
}

describe('a turn with every span type', () => {
  const sessionId = newSessionId('trace');
  const turnId = `${sessionId}/turn-1`;
  let approver: Client;
  let answerer: Client;
  /** The trace while the turn waited for the approval. */
  let waiting: Trace;

  beforeAll(async () => {
    approver = new Client({ connection: h.client.connection, identity: 'alice@trace-test' });
    answerer = new Client({ connection: h.client.connection, identity: 'bob@trace-test' });
    const ws = path.join(h.home, 'workspaces', sessionId);
    mkdirSync(ws, { recursive: true });
    writeFileSync(path.join(ws, 'big.txt'), 'line of the big file\n'.repeat(600));
    const script = {
      steps: [
        {
          fault: { status: 500, times: 1 },
          tool_calls: [
            { name: 'get_current_time', arguments: {} },
            { name: 'write_file', arguments: { path: 'notes.txt', content: 'hello' } },
            { name: 'run_shell', arguments: { command: 'sudo ls' } },
            { name: 'read_file', arguments: { path: 'missing.txt' } },
            { name: 'read_file', arguments: {} },
            { name: 'recall', arguments: { query: 'colour' } },
            { name: 'mcp__everything__echo', arguments: { message: 'hi' } },
          ],
        },
        { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }] },
        { tool_calls: [{ name: 'read_file', arguments: { path: 'big.txt' } }] },
        { content: 'Done. HARNESS_OK' },
      ],
      summaries: ['Summary: read big.txt; the colour is blue.'],
    };
    const config = {
      ...scriptedConfig(script, {}, DEFAULT_POLICY),
      memory: { namespace: `trace-${sessionId}`, preload: 0 },
      // Small enough that the big file's result (but nothing before it) passes the threshold.
      compression: { ...DEFAULT_COMPRESSION, contextWindow: 4000, outputReserve: 500, threshold: 0.5, keepTail: 2 },
      mcp: { servers: [everythingStdio({ decision: 'allow' })] },
    };
    h.declareUsed(config);
    await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config, text: 'do all the things' });
    let out = await waitForTurn(h.client, turnId, { pollMs: 100 });
    expect(out.kind === 'waiting' && out.state.status).toBe('waiting_for_approval');
    waiting = await loadTrace(h.client, turnId);
    await decideApprovals(approver, sessionId, { approve: true });
    out = await waitForTurn(h.client, turnId, { pollMs: 100 });
    expect(out.kind === 'waiting' && out.state.status).toBe('waiting_for_user');
    // An answer with an escape sequence: the trace shows it, never sends it to the terminal.
    await answerQuestion(answerer, sessionId, 'blue \u001b[31mred');
    out = await waitForTurn(h.client, turnId, { pollMs: 100 });
    expect(out.kind === 'done' && out.result.terminated_by).toBe('final_answer');
  }, 120_000);

  it('has every span type, linked turn → step → call → approval/question, with the facts history holds', async () => {
    const trace = await loadTrace(h.client, sessionId);
    expect(trace).toMatchObject({ kind: 'session', sessionId, session: { turns: 1 }, notes: [] });
    const list = spans(trace);
    expectConsistent(list, sessionId);
    expect(new Set(list.map((s) => s.type))).toEqual(new Set(['turn', 'step', 'llm_call', 'tool_call', 'compress', 'approval', 'ask_user']));

    const turn = list[0]!;
    expect(turn).toMatchObject({ type: 'turn', name: turnId, status: 'ok', input: { turn: 1, user_message: 'do all the things' } });
    expect(turn.output).toMatchObject({ status: 'completed', terminated_by: 'final_answer', answer: 'Done. HARNESS_OK', steps: 4 });
    expect(turn.input.sent_by).toBeTruthy();
    expect(list.filter((s) => s.type === 'step').map((s) => s.name)).toEqual(['step 1', 'step 2', 'step 3', 'step 4']);

    // The model call of step 1 failed once (HTTP 500) and succeeded on its second attempt.
    const llms = list.filter((s) => s.type === 'llm_call');
    expect(llms).toHaveLength(4);
    expect(llms[0]!.output).toMatchObject({ attempts: 2 });
    expect(String(llms[0]!.output!.last_failure)).toContain('500');
    expect((llms[0]!.output!.tool_calls as unknown[]).length).toBe(7);
    expect((llms[0]!.output!.usage as { total_tokens: number }).total_tokens).toBeGreaterThan(0);
    expect(llms[3]!.output).toMatchObject({ attempts: 1, content: 'Done. HARNESS_OK', tool_calls: [] });

    const calls = list.filter((s) => s.type === 'tool_call');
    const call = (id: string) => calls.find((c) => c.input.call_id === id)!;
    expect(calls.map((c) => c.name)).toEqual(['get_current_time', 'write_file', 'run_shell', 'read_file', 'read_file', 'recall', 'mcp__everything__echo', 'ask_user', 'read_file']);
    expect(call('t1-s1-c0')).toMatchObject({ status: 'ok', output: { ok: true, execution: { kind: 'local_activity' } }, input: { policy: { decision: 'allow' } } });
    expect(call('t1-s1-c1')).toMatchObject({ status: 'ok', output: { ok: true, result: { bytes_written: 5 }, approval: { approved: true, by: 'alice@trace-test' } } });
    expect(call('t1-s1-c2')).toMatchObject({ status: 'error', output: { error_type: 'PERMISSION_DENIED', execution: { kind: 'workflow' } }, input: { policy: { decision: 'deny', rule: 'deny-privilege' } } });
    expect(call('t1-s1-c3')).toMatchObject({ status: 'error', output: { error_type: 'FILE_NOT_FOUND', execution: { kind: 'local_activity' } } });
    expect(call('t1-s1-c4')).toMatchObject({ status: 'error', output: { error_type: 'INVALID_ARGUMENTS', execution: { kind: 'workflow' } } });
    expect(call('t1-s1-c5')).toMatchObject({ status: 'ok', output: { ok: true, execution: { kind: 'activity', attempts: 1 } } });
    expect(call('t1-s1-c6')).toMatchObject({ status: 'ok', source: 'mcp:everything', output: { ok: true, execution: { kind: 'local_activity' } } });
    expect(JSON.stringify(call('t1-s1-c6').output)).toContain('Echo: hi');
    expect(call('t1-s3-c0').output).toMatchObject({ ok: true, stored: { ref: expect.any(String) } });

    const approval = list.find((s) => s.type === 'approval')!;
    expect(approval.parent_id).toBe(call('t1-s1-c1').span_id);
    expect(approval).toMatchObject({ status: 'ok', input: { call_id: 't1-s1-c1', tool: 'write_file', rule: 'mode ask', risk: 'write' }, output: { approved: true, by: 'alice@trace-test' } });
    expect(Date.parse(String(approval.output!.at))).toBeGreaterThan(Date.parse(approval.start!));

    const question = list.find((s) => s.type === 'ask_user')!;
    expect(question.parent_id).toBe(call('t1-s2-c0').span_id);
    expect(question).toMatchObject({ status: 'ok', input: { question: 'Which colour?' }, output: { answer: 'blue \u001b[31mred', by: 'bob@trace-test' } });

    const compress = list.find((s) => s.type === 'compress')!;
    expect(compress.parent_id).toBe(list.find((s) => s.name === 'step 4')!.span_id);
    expect(compress.output).toMatchObject({ compressed: true, compacted_tool_results: 1 });
    expect(Number(compress.output!.after_tokens)).toBeLessThan(Number(compress.output!.before_tokens));

    // A turn id traces that turn alone, with the same ids.
    const one = await loadTrace(h.client, turnId);
    expect(one.kind).toBe('turn');
    expect(spans(one).map((s) => s.span_id)).toEqual(list.map((s) => s.span_id));
  });

  it('shows a turn waiting for an approval as running, with the pending call', () => {
    const list = spans(waiting);
    expectConsistent(list, sessionId);
    expect(list[0]).toMatchObject({ status: 'running', end: null, output: { status: 'waiting_for_approval', pending: { kind: 'approvals' } } });
    expect(list.find((s) => s.type === 'approval')).toMatchObject({ status: 'running', end: null, output: null, input: { call_id: 't1-s1-c1', tool: 'write_file' } });
    // The step's calls have no outcome in history yet (a denial is recorded when the step ends).
    for (const id of ['t1-s1-c0', 't1-s1-c2']) expect(list.find((s) => s.input.call_id === id)).toMatchObject({ status: 'running', output: null });
    const out = text(waiting);
    expect(out).toContain(`turn ${turnId}  waiting_for_approval · 1 step`);
    expect(out).toContain('waiting: approval of t1-s1-c1 write_file');
    expect(out).toMatch(/tool write_file .*ask \(mode ask\) {2}pending\s*\n\s+approval pending: no rule allows `write_file`/);
    expect(out).toMatch(/step 1 {2}running\n/);
  });

  it('renders one line per span, escaped, with decisions, who and when', async () => {
    const out = text(await loadTrace(h.client, sessionId));
    const lines = out.split('\n');
    expect(lines[0]).toMatch(new RegExp(`^session ${sessionId}  open · 1 turn`));
    expect(out).toContain(`turn ${turnId}  ok · final_answer · 4 steps`);
    expect(out).toContain('user: do all the things');
    expect(lines.find((l) => /^\s+model scripted {2}2 attempts/.test(l))).toMatch(/500.*→ get_current_time, write_file, run_shell/);
    expect(lines.find((l) => l.includes('tool run_shell'))).toMatch(/deny \(deny-privilege\)\s+PERMISSION_DENIED/);
    expect(lines.find((l) => l.includes('tool write_file'))).toMatch(/ask \(mode ask\)\s+ok/);
    expect(lines.find((l) => l.includes('approval approved'))).toMatch(/by alice@trace-test at \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ/);
    expect(lines.find((l) => l.includes('question Which colour?'))).toContain('→ blue \\e[31mred by bob@trace-test at ');
    expect(out).toMatch(/compress {2}\d+ → \d+ tokens/);
    expect(out).toContain('[mcp:everything]');
    expect(out).toContain('→ answer: Done. HARNESS_OK');
    expect(out).not.toContain('\u001b');
  });

  it('--full reads the payloads history names by hash from the message store', async () => {
    const trace = await loadTrace(h.client, turnId, { store: { store: h.store, close: async () => {} } });
    expect(trace.notes).toEqual([]);
    const list = spans(trace);
    const llms = list.filter((s) => s.type === 'llm_call');
    expect(llms[0]!.input.messages).toEqual([{ role: 'user', content: 'do all the things' }]);
    expect(String(llms[0]!.input.system)).toContain('You are a test agent.');
    expect(llms[1]!.input.system).toBeUndefined(); // unchanged since the first call
    const big = list.find((s) => s.type === 'tool_call' && s.input.call_id === 't1-s3-c0')!;
    expect(JSON.stringify(big.output!.result)).toContain('line of the big file');
    const out = text(trace, true);
    expect(out).toContain('[user]: do all the things');
    expect(out).toContain('line of the big file');
  });
});

describe('a turn whose worker was killed mid-step', () => {
  const workers: ChildProcess[] = [];
  afterAll(async () => {
    for (const w of workers) await kill(w, 'SIGKILL');
  });

  it('traces every completed step while the turn is stuck, and the whole turn once a new worker finished it', async () => {
    const model = await startScriptedModel({
      script: {
        steps: [
          { tool_calls: [{ name: 'get_current_time', arguments: {} }] },
          // The first request of this step hangs until the test has killed its worker.
          { fault: { delay_ms: 60_000 }, tool_calls: [{ name: 'list_files', arguments: {} }] },
          { content: 'Recovered. HARNESS_OK' },
        ],
      },
    });
    try {
      const home = mkdtempSync(path.join(os.tmpdir(), 'harness-trace-crash-'));
      const env = cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_TASK_QUEUE: `trace-crash-${randomUUID()}`, HARNESS_HOME: home, DATABASE_URL: TEST_DATABASE_URL, OPENAI_BASE_URL: model.url });
      const sessionId = newSessionId('trace-crash');
      workers.push(await spawnWorker(env));
      const config = endpointConfig(model.url, { modelHeartbeatMs: 2_000, modelTimeoutMs: 120_000, modelLocalMs: 1_000 });
      const { turnId } = await sendMessage(h.client, { taskQueue: env.HARNESS_TASK_QUEUE!, sessionId, config, text: 'tell the time, then list' });
      // The slow call is handed on to an activity (after a second in the workflow task,
      // limits.modelLocalMs): the kill lands on it there, with step 1 recorded before it.
      await expect.poll(async () => modelProgress(await h.client.workflow.getHandle(turnId).describe()), { timeout: 30_000, interval: 100 }).toBeDefined();
      await kill(workers[0], 'SIGKILL');

      const stuck = spans(await loadTrace(h.client, turnId));
      expectConsistent(stuck, sessionId);
      expect(stuck[0]).toMatchObject({ type: 'turn', status: 'running', end: null, output: { status: 'running' } });
      const step1 = stuck.filter((s) => s.parent_id === stuck.find((x) => x.name === 'step 1')!.span_id);
      expect(step1.map((s) => [s.type, s.name, s.status])).toEqual([
        ['llm_call', 'test-model', 'ok'],
        ['tool_call', 'get_current_time', 'ok'],
      ]);
      const step2 = stuck.find((s) => s.name === 'step 2')!;
      expect(step2).toMatchObject({ status: 'running', end: null });
      expect(stuck.find((s) => s.type === 'llm_call' && s.parent_id === step2.span_id)).toMatchObject({ status: 'running', end: null, error: null });
      const story = text(await loadTrace(h.client, turnId));
      expect(story).toMatch(new RegExp(`turn ${turnId}  running · 2 steps`));
      expect(story).toMatch(/step 2 {2}running\n\s+model test-model {2}running/);

      workers.push(await spawnWorker(env));
      const out = await waitForTurn(h.client, turnId, { pollMs: 200 });
      expect(out.kind === 'done' && out.result.answer).toBe('Recovered. HARNESS_OK');
      const done = spans(await loadTrace(h.client, turnId));
      expectConsistent(done, sessionId);
      expect(done.every((s) => s.status === 'ok')).toBe(true);
      const retried = done.filter((s) => s.type === 'llm_call')[1]!;
      // The killed attempt timed out on its heartbeat; the new worker's attempt answered.
      expect(retried.output).toMatchObject({ attempts: 2, tool_calls: [{ name: 'list_files' }] });
      expect(String(retried.output!.last_failure)).toMatch(/heartbeat/i);
      expect(done.filter((s) => s.type === 'tool_call').map((s) => s.name)).toEqual(['get_current_time', 'list_files']);
    } finally {
      await model.close();
    }
  }, 180_000);
});

describe('the stored histories (every release the support window holds)', () => {
  const root = path.join(__dirname, '..', 'histories');
  const turnFiles = readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory()).flatMap(({ name: v }) =>
    readdirSync(path.join(root, v))
      .filter((f) => f.includes('.turn-'))
      .map((f) => path.join(root, v, f)),
  );
  // `history-v0.4.turn-1.run2.json` is the second run of `history-v0.4/turn-1`.
  const turns = new Map<string, string[]>();
  for (const f of turnFiles.sort()) {
    const id = path.basename(f, '.json').replace(/\.run\d+$/, '').replace('.turn-', '/turn-');
    turns.set(id, [...(turns.get(id) ?? []), f]);
  }

  it.each([...turns].map(([id, files]) => [id, files] as const))('%s traces with every call answered', (id, files) => {
    const runs = files.map((f, i) => ({ workflowId: id, runId: String(i), workflowType: 'turnWorkflow', events: decodeEvents(historyFromJSON(JSON.parse(readFileSync(f, 'utf8'))).events ?? []) }));
    const sessionId = id.split('/')[0]!;
    const list = buildTurnSpans(id, readTimeline(runs), { traceId: traceId(sessionId), sessionId }).map((s) => s.span);
    expectConsistent(list, sessionId);
    expect(list[0]).toMatchObject({ type: 'turn', status: 'ok' });
    expect(list.filter((s) => s.status === 'running')).toEqual([]);
    expect(list.filter((s) => s.type === 'tool_call').every((s) => s.output && typeof s.output.ok === 'boolean')).toBe(true);
    if (id === 'history-v0.12-mcp/turn-1') {
      const asked = list.find((s) => s.type === 'ask_user')!;
      expect(asked).toMatchObject({ source: 'mcp:everything', status: 'ok' });
      expect(list.filter((s) => s.source === 'mcp:everything' && s.type === 'tool_call')).toHaveLength(3);
    }
  });
});
