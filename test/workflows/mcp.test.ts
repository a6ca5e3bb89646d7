/**
 * MCP tools through whole turns, with real third-party servers (server-everything over stdio and
 * Streamable HTTP, server-filesystem over stdio), configured the way users do (harness.config.json
 * `mcpServers`) and under the default policy (mode `ask`): discovery once at session start (the
 * list is in history), validation against the server's schema, approvals, denials, tool errors,
 * servers that die, never start or hang (elicitation: mcp-elicit-wait.test.ts).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveSessionConfig } from '../../config/resolve';
import { decideApprovals, sendMessage, sessionState } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import type { TurnResult } from '../../deterministic/session';
import type { SessionConfig } from '../../deterministic/session-config';
import type { McpToolSet } from '../../deterministic/mcp';
import { newSessionId, startHarness, type TestHarness } from '../support/harness';
import { removeTempDirs, tempDir, writeScript } from '../support/cli';
import { alive, EVERYTHING, FILESYSTEM, startEverythingHttp, until } from '../support/mcp-servers';

let h: TestHarness;
let dir: string;
let http: Awaited<ReturnType<typeof startEverythingHttp>>;
let spawns: string;
let fsRoot: string;

/** A session config resolved from a config file with these servers (named with --config: trusted). */
function config(servers: Record<string, unknown>, steps: unknown[], extra: Record<string, unknown> = {}): SessionConfig {
  const file = path.join(dir, `harness.config.${Math.random().toString(36).slice(2, 8)}.json`);
  writeFileSync(file, JSON.stringify({ mcpServers: servers, limits: { askUserTimeoutSec: 120, approvalTimeoutSec: 120 }, ...extra }));
  const script = writeScript(dir, { steps });
  const c = resolveSessionConfig({ config: file, model: `scripted:${script}` }, {}, dir);
  h.declareConfig(file);
  return { ...c, limits: { ...c.limits, modelHeartbeatMs: 5_000 } };
}

const everything = { command: process.execPath, args: [EVERYTHING, 'stdio'] };
const call = (name: string, args: unknown) => ({ tool_calls: [{ name, arguments: args }] });

/** The tool message the model got for the call of `step` (1-based), parsed. */
async function toolResult(r: TurnResult, index = 0): Promise<Record<string, unknown>> {
  const tools = (await h.messages(r)).filter((m) => m.role === 'tool');
  return JSON.parse((tools[index] as { content: string }).content) as Record<string, unknown>;
}

beforeAll(async () => {
  h = await startHarness();
  dir = tempDir('harness-mcp-');
  spawns = path.join(dir, 'spawns.txt');
  fsRoot = path.join(dir, 'files');
  mkdirSync(fsRoot);
  writeFileSync(path.join(fsRoot, 'notes.txt'), 'MCP_FILE_CONTENT 42');
  http = await startEverythingHttp();
});
afterAll(async () => {
  await h?.stop();
  await http?.stop();
  removeTempDirs();
});

describe('MCP tools in a turn under the default policy', () => {
  it('asks before an MCP call, runs it once approved, and the model gets the real result', async () => {
    const sessionId = newSessionId('mcp-echo');
    const c = config({ everything }, [call('mcp__everything__echo', { message: 'hello from the model' }), { expect: { last_message_contains: 'hello from the model' }, content: 'done' }]);
    const r = await h.finishApproving(sessionId, c, 'echo something');
    expect(r.terminated_by).toBe('final_answer');
    expect(r.asked).toEqual(['mcp__everything__echo: {"message":"hello from the model"}']);
    const out = await toolResult(r);
    expect(out.ok).toBe(true);
    expect(JSON.stringify(out.result)).toContain('hello from the model');
    const rec = r.toolCalls[0]!;
    expect(rec).toMatchObject({ name: 'mcp__everything__echo', ok: true, policy: { decision: 'ask' }, approval: { approved: true } });
  });

  it('validates arguments against the server schema before calling: INVALID_ARGUMENTS names the field', async () => {
    const c = config({ everything }, [call('mcp__everything__get-sum', { a: 'one', b: 2 }), { content: 'done' }]);
    const r = await h.finish(newSessionId('mcp-invalid'), c, 'add');
    const out = await toolResult(r);
    expect(out).toMatchObject({ ok: false, error_type: 'INVALID_ARGUMENTS' });
    expect(out.message).toMatch(/\ba\b.*number/);
  });

  it('a server `decision` rule denies its tools (recorded) and allows another server', async () => {
    const c = config(
      { everything: { ...everything, decision: 'deny' }, files: { command: process.execPath, args: [FILESYSTEM, fsRoot], cwd: fsRoot, decision: 'allow' } },
      [call('mcp__everything__echo', { message: 'x' }), call('mcp__files__read_text_file', { path: 'notes.txt' }), { expect: { last_message_contains: 'MCP_FILE_CONTENT 42' }, content: 'read it' }],
    );
    const r = await h.finish(newSessionId('mcp-deny'), c, 'go');
    expect(r.terminated_by).toBe('final_answer');
    expect(await toolResult(r, 0)).toMatchObject({ ok: false, error_type: 'PERMISSION_DENIED' });
    expect(r.toolCalls[0]!.policy).toMatchObject({ decision: 'deny', rule: 'mcp:everything' });
    expect(await toolResult(r, 1)).toMatchObject({ ok: true });
    expect(r.toolCalls[1]!.policy).toMatchObject({ decision: 'allow', rule: expect.stringContaining('mcp:files') });
  });

  it('a human denial reaches the model as APPROVAL_DENIED and the tool never runs', async () => {
    const sessionId = newSessionId('mcp-human-deny');
    const c = config({ files: { command: process.execPath, args: [FILESYSTEM, fsRoot], cwd: fsRoot } }, [
      call('mcp__files__write_file', { path: 'denied.txt', content: 'should not exist' }),
      { content: 'ok' },
    ]);
    const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config: c, text: 'write' });
    const waiting = await waitForTurn(h.client, turnId, { pollMs: 100 });
    expect(waiting.kind).toBe('waiting');
    const p = waiting.kind === 'waiting' ? waiting.state.pending : undefined;
    expect(p?.kind === 'approvals' && p.calls[0]).toMatchObject({ tool: 'mcp__files__write_file', risk: 'write' });
    await decideApprovals(h.client, sessionId, { calls: p!.kind === 'approvals' ? p!.calls.map((x) => ({ callId: x.callId, digest: x.digest! })) : [], approve: false, reason: 'not now' });
    const done = await waitForTurn(h.client, turnId, { pollMs: 100 });
    expect(done.kind === 'done' && done.result.toolCalls[0]).toMatchObject({ ok: false, error_type: 'APPROVAL_DENIED' });
    expect(() => readFileSync(path.join(fsRoot, 'denied.txt'))).toThrow();
  });

  it('an MCP tool error (isError) is MCP_TOOL_ERROR with the server text', async () => {
    const c = config({ files: { command: process.execPath, args: [FILESYSTEM, fsRoot], cwd: fsRoot, decision: 'allow' } }, [
      call('mcp__files__read_text_file', { path: 'missing.txt' }),
      { expect: { last_message_contains: 'MCP_TOOL_ERROR' }, content: 'no such file' },
    ]);
    const r = await h.finish(newSessionId('mcp-error'), c, 'read');
    const out = await toolResult(r);
    expect(out).toMatchObject({ ok: false, error_type: 'MCP_TOOL_ERROR' });
    expect(String(out.message)).toMatch(/missing\.txt|ENOENT|no such file/i);
  });

  it('works over Streamable HTTP (asked and approved under the default policy)', async () => {
    const c = config({ web: { url: http.url } }, [call('mcp__web__get-sum', { a: 40, b: 2 }), { expect: { last_message_contains: '42' }, content: 'sum done' }]);
    const r = await h.finishApproving(newSessionId('mcp-http'), c, 'add');
    expect(r.asked).toEqual(['mcp__web__get-sum: {"a":40,"b":2}']);
    expect(await toolResult(r)).toMatchObject({ ok: true });
  });
});

describe('approvals and payloads', () => {
  it('`--always` approves an MCP tool for the rest of the session', async () => {
    const sessionId = newSessionId('mcp-always');
    const c = config({ everything }, [call('mcp__everything__echo', { message: 'one' }), call('mcp__everything__echo', { message: 'two' }), { content: 'done' }]);
    const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config: c, text: 'echo twice' });
    const waiting = await waitForTurn(h.client, turnId, { pollMs: 100 });
    const p = waiting.kind === 'waiting' ? waiting.state.pending : undefined;
    expect(p?.kind).toBe('approvals');
    await decideApprovals(h.client, sessionId, { calls: p!.kind === 'approvals' ? p!.calls.map((x) => ({ callId: x.callId, digest: x.digest! })) : [], approve: true, always: true });
    const done = await waitForTurn(h.client, turnId, { pollMs: 100 });
    expect(done.kind).toBe('done');
    const calls = done.kind === 'done' ? done.result.toolCalls : [];
    expect(calls.map((t) => t.ok)).toEqual([true, true]);
    expect(calls[1]!.policy).toMatchObject({ decision: 'allow', rule: 'always:mcp__everything__echo' });
  });

  it('a large MCP result goes to the message store: the model reads it whole, history holds a reference', async () => {
    const big = `${'lorem ipsum dolor sit amet '.repeat(8_000)}END_OF_BIG_FILE_7731`;
    writeFileSync(path.join(fsRoot, 'big.txt'), big);
    const sessionId = newSessionId('mcp-big');
    const c = config({ files: { command: process.execPath, args: [FILESYSTEM, fsRoot], cwd: fsRoot } }, [
      call('mcp__files__read_text_file', { path: 'big.txt' }),
      { expect: { last_message_contains: 'END_OF_BIG_FILE_7731' }, content: 'read' },
    ]);
    const r = await h.finishApproving(sessionId, c, 'read the big file');
    expect(r.asked).toHaveLength(1);
    expect(r.terminated_by).toBe('final_answer');
    const history = await h.client.workflow.getHandle(`${sessionId}/turn-1`).fetchHistory();
    const text = JSON.stringify(history.events, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v));
    // At most a preview: no run of the content longer than a few hundred characters.
    expect(text).not.toContain('lorem ipsum dolor sit amet '.repeat(40));
    expect(text).not.toContain('END_OF_BIG_FILE_7731');
  });
});

describe('server lifecycle', () => {
  const counted = { command: '/bin/sh', args: ['-c', `echo x >> '${path.join('SPAWNS')}'; exec '${process.execPath}' '${EVERYTHING}' stdio`], decision: 'allow' };
  const countedIn = () => ({ ...counted, args: ['-c', counted.args[1]!.replace('SPAWNS', spawns)] });
  const spawnCount = () => readFileSync(spawns, 'utf8').trim().split('\n').length;

  it('one server process serves the many calls of a session; another session has its own', async () => {
    const steps = [...Array.from({ length: 6 }, (_, i) => call('mcp__counted__echo', { message: `m${i}` })), { content: 'done' }];
    for (const s of ['a', 'b']) {
      const r = await h.finish(newSessionId(`mcp-many-${s}`), config({ counted: countedIn() }, steps), 'echo a lot');
      expect(r.toolCalls.filter((t) => t.ok)).toHaveLength(6);
    }
    expect(spawnCount()).toBe(2);
  });

  it('idempotent tools run as local activities; one slower than that may be runs again as an activity', async () => {
    const sessionId = newSessionId('mcp-local');
    const c = config({ everything: { ...everything, decision: 'allow' } }, [
      call('mcp__everything__echo', { message: 'quick' }),
      call('mcp__everything__trigger-long-running-operation', { duration: 7, steps: 7 }),
      { content: 'done' },
    ]);
    const r = await h.finish(sessionId, c, 'go');
    expect(r.toolCalls.map((t) => t.ok)).toEqual([true, true]);
    const events = (await h.client.workflow.getHandle(`${sessionId}/turn-1`).fetchHistory()).events ?? [];
    const executeTools = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'executeTool');
    const markers = events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity');
    // echo: one local activity; the slow call: a local attempt sent back, then one activity.
    expect(executeTools).toHaveLength(1);
    expect(markers.length).toBeGreaterThanOrEqual(2);
  });

  it('a server killed between two calls is restarted by the next call', async () => {
    const sessionId = newSessionId('mcp-kill');
    const c = config({ counted: countedIn() }, [call('mcp__counted__echo', { message: 'before' }), { content: 'one' }, call('mcp__counted__echo', { message: 'after' }), { content: 'two' }]);
    await h.finish(sessionId, c, 'first');
    const before = spawnCount();
    const pid = h.mcp.stats().find((s) => s.server === 'counted' && s.scope.sessionId === sessionId)?.pid;
    expect(pid).toBeGreaterThan(0);
    process.kill(pid!, 'SIGKILL');
    await until(() => !alive(pid!));
    const r = await h.finish(sessionId, c, 'second');
    expect(await toolResult(r, 1)).toMatchObject({ ok: true });
    expect(spawnCount()).toBe(before + 1);
  });

  it('a server that cannot start costs only its own tools: MCP_SERVER_UNAVAILABLE, local tools work', async () => {
    const sessionId = newSessionId('mcp-bad');
    const c = config({ broken: { command: '/nonexistent/mcp-server' }, everything: { ...everything, decision: 'allow' } }, [
      call('mcp__broken__anything', {}),
      call('get_current_time', {}),
      call('mcp__everything__echo', { message: 'still here' }),
      { content: 'done' },
    ]);
    const r = await h.finish(sessionId, c, 'go');
    expect(await toolResult(r, 0)).toMatchObject({ ok: false, error_type: 'MCP_SERVER_UNAVAILABLE' });
    expect(String((await toolResult(r, 0)).message)).toContain('/nonexistent/mcp-server');
    expect(await toolResult(r, 1)).toMatchObject({ ok: true });
    expect(await toolResult(r, 2)).toMatchObject({ ok: true });
    const state = await sessionState(h.client, sessionId);
    expect(state.mcp).toEqual(expect.arrayContaining([expect.objectContaining({ server: 'broken', status: 'failed' }), expect.objectContaining({ server: 'everything', status: 'connected' })]));
  });

  it('a server that never answers delays the session by its startup timeout only; a hung call times out', async () => {
    const sessionId = newSessionId('mcp-hung');
    const c = config(
      {
        silent: { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1e9)'], startupTimeoutSec: 2 },
        everything: { ...everything, decision: 'allow', callTimeoutSec: 2 },
      },
      [call('mcp__everything__trigger-long-running-operation', { duration: 30, steps: 3 }), call('mcp__everything__echo', { message: 'after the hang' }), { content: 'done' }],
    );
    const r = await h.finish(sessionId, c, 'go');
    const hung = await toolResult(r, 0);
    expect(hung).toMatchObject({ ok: false, error_type: 'MCP_SERVER_UNAVAILABLE' });
    expect(String(hung.message)).toMatch(/did not answer within 2/);
    expect(await toolResult(r, 1)).toMatchObject({ ok: true });
    const state = await sessionState(h.client, sessionId);
    expect(state.mcp?.find((s) => s.server === 'silent')).toMatchObject({ status: 'failed', error: expect.stringMatching(/2(\.0)? ?s|2000 ?ms|within/) });
  });
});

describe('listing and history', () => {
  it('a server whose tool list changes is listed again: the next step offers the new tool', async () => {
    const growing = { command: process.execPath, args: [path.join(__dirname, '..', 'support', 'mcp-growing-server.cjs')] };
    const c = config({ growing }, [
      call('mcp__growing__unlock', {}),
      { expect: { tools_include: 'mcp__growing__secret' }, ...call('mcp__growing__secret', { who: 'the tester' }) },
      { expect: { last_message_contains: 'PINEAPPLE' }, content: 'found it' },
    ]);
    const sessionId = newSessionId('mcp-relist');
    const r = await h.finishApproving(sessionId, c, 'find the secret');
    expect(r.asked.map((a) => a.split(':')[0])).toEqual(['mcp__growing__unlock', 'mcp__growing__secret']);
    expect(r.terminated_by).toBe('final_answer');
    expect(r.toolCalls.map((t) => [t.name, t.ok])).toEqual([
      ['mcp__growing__unlock', true],
      ['mcp__growing__secret', true],
    ]);
    // The session keeps the new list for its next turns.
    expect((await sessionState(h.client, sessionId)).mcp).toEqual([expect.objectContaining({ server: 'growing', tools: 2 })]);
  });

  it('the tool set is in the session history by reference (discovery once, at start); each turn reads its list back', async () => {
    const sessionId = newSessionId('mcp-history');
    const c = config({ everything: { ...everything, decision: 'allow' } }, [call('mcp__everything__echo', { message: 'x' }), { content: 'one' }, { content: 'two' }]);
    await h.finish(sessionId, c, 'first');
    await h.finish(sessionId, c, 'second');
    const history = await h.client.workflow.getHandle(sessionId).fetchHistory();
    const scheduled = history.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'discoverMcpTools');
    expect(scheduled).toHaveLength(1);
    const completed = history.events!.find((e) => e.activityTaskCompletedEventAttributes && e.activityTaskCompletedEventAttributes.scheduledEventId?.toString() === scheduled[0]!.eventId?.toString());
    const payload = completed!.activityTaskCompletedEventAttributes!.result!.payloads![0]!;
    const set = JSON.parse(Buffer.from(payload.data!).toString('utf8')) as McpToolSet;
    // The session's history names the list; the schemas are in the store, read by each turn.
    expect(set).toMatchObject({ tools: [], stored: true, ref: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const turn = (await h.client.workflow.getHandle(`${sessionId}/turn-2`).fetchHistory()).events!;
    const load = turn.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'loadMcpTools')!;
    const loaded = turn.find((e) => e.activityTaskCompletedEventAttributes?.scheduledEventId?.toString() === load.eventId?.toString())!;
    set.tools = JSON.parse(Buffer.from(loaded.activityTaskCompletedEventAttributes!.result!.payloads![0]!.data!).toString('utf8')) as McpToolSet['tools'];
    const names = set.tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['mcp__everything__echo', 'mcp__everything__get-sum']));
    expect(set.tools.find((t) => t.name === 'mcp__everything__get-sum')!.inputSchema).toMatchObject({ type: 'object', properties: { a: expect.any(Object), b: expect.any(Object) } });
    expect(set.servers).toEqual([expect.objectContaining({ server: 'everything', status: 'connected' })]);
  });
});
