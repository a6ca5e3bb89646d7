/**
 * `harness rerun` never repeats an effect outside the sandbox unasked, under the default policy.
 * A recorded turn called a real MCP server, a loopback HTTP server and a custom tool (each call
 * approved), then wrote a file. Its rerun answers the three calls with their recorded results
 * (marked replayed in the rerun's call records and trace) and reaches none of them, while the
 * file tool runs again in the rerun's own workspace. With --live-effects the three are asked
 * about again (the recorded approvals do not apply to them) and reach their servers only once a
 * person approves.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TurnResult } from '../../deterministic/session';
import { decideApprovals } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { newSessionId } from '../support/harness';
import { cliEnv, describeResult, parseJson, removeTempDirs, runCli, tempDir } from '../support/cli';
import { approveAll, startOutsideWorld, type OutsideWorld } from '../support/outside-effects';

let w: OutsideWorld;
let env: NodeJS.ProcessEnv;
let turnId: string;
const cli = (args: string[]) => runCli(['rerun', ...args], { env, timeoutMs: 120_000 });
const OUTSIDE = ['mcp__counter__send', 'http_request', 'send_order'];

beforeAll(async () => {
  w = await startOutsideWorld();
  env = cliEnv({ TEMPORAL_ADDRESS: w.h.address, HARNESS_TASK_QUEUE: w.h.taskQueue, HARNESS_HOME: path.join(tempDir('harness-cli-rerun-effects-'), 'home') });
  const source = newSessionId('rerun-fx');
  w.model.registerScript(source, {
    steps: [{ tool_calls: w.calls('recorded') }, { tool_calls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'sent\n' } }] }, { content: 'Sent, requested, ordered and noted.' }],
  });
  const r = await approveAll(w.h, source, await w.h.turn(source, w.config, 'send, request, order, note'));
  expect(r.terminated_by).toBe('final_answer');
  expect(r.toolCalls.map((c) => [c.name, c.ok])).toEqual([...OUTSIDE.map((n) => [n, true]), ['write_file', true]]);
  expect(await w.take()).toEqual({ mcp: 1, http: 1, custom: 1 });
  turnId = r.turnId;
}, 180_000);
afterAll(async () => {
  await w?.stop();
  removeTempDirs();
});

describe('harness rerun and calls that leave the sandbox', () => {
  it('answers them from the record, marked replayed, reaching no server; the file tool runs again in the rerun\'s workspace', async () => {
    const r = await cli([turnId, '--json']);
    expect(r.code, describeResult(r)).toBe(0);
    const out = parseJson<{ session_id: string; effects: string; rerun: unknown }>(r);
    expect(out).toMatchObject({ terminated_by: 'final_answer', steps: 3, effects: 'record', rerun: { diverged: false, compared: 3 } });
    expect(r.errLines[1]).toBe('calls that leave the sandbox (http_request, MCP and custom tools, remember_longterm) are answered from the record, not made (3 in the record)');
    expect(await w.take()).toEqual({ mcp: 0, http: 0, custom: 0 });
    // The sandbox's side ran again, in the rerun's own workspace.
    const ws = path.join(w.h.home, 'workspaces', out.session_id);
    expect(existsSync(path.join(ws, 'notes.txt')) && readFileSync(path.join(ws, 'notes.txt'), 'utf8')).toBe('sent\n');

    const result = (await w.h.client.workflow.getHandle(`${out.session_id}/turn-1`).result()) as TurnResult;
    const replayed = result.toolCalls.filter((c) => c.replayed).map((c) => [c.name, c.replayed]);
    expect(replayed).toEqual(OUTSIDE.map((n) => [n, turnId]));
    expect(result.toolCalls.find((c) => c.name === 'write_file')?.replayed).toBeUndefined();
    // Nobody was asked about them, and the record's results are what the rerun read.
    expect(result.toolCalls.filter((c) => OUTSIDE.includes(c.name)).every((c) => c.approval === undefined && c.ok)).toBe(true);

    const trace = await runCli(['trace', `${out.session_id}/turn-1`, '--json'], { env, timeoutMs: 60_000 });
    expect(trace.code, describeResult(trace)).toBe(0);
    const spans = trace.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; name: string; output: { execution?: { kind?: string; replayed_from?: string } } | null });
    const kinds = spans.filter((s) => s.type === 'tool_call').map((s) => [s.name, s.output?.execution?.kind, s.output?.execution?.replayed_from]);
    expect(kinds).toEqual([...OUTSIDE.map((n) => [n, 'record', turnId]), ['write_file', 'local_activity', undefined]]);
  }, 180_000);

  it('--live-effects asks about each of them again under the default policy and makes them only once approved', async () => {
    const r = await cli([turnId, '--live-effects', '--json']);
    expect(r.code, describeResult(r)).toBe(3);
    expect(r.errLines[1]).toBe('calls that leave the sandbox (http_request, MCP and custom tools, remember_longterm) are made again, each judged by the policy afresh (--live-effects)');
    const waiting = parseJson<{ session_id: string; pending: { calls: { tool: string }[] } }>(r);
    expect(waiting.pending.calls.map((c) => c.tool)).toEqual(OUTSIDE);
    expect(await w.take()).toEqual({ mcp: 0, http: 0, custom: 0 });

    // Approved by a person now, they run once each; the recorded approval of write_file still applies.
    const rerun = waiting.session_id;
    await decideApprovals(w.h.client, rerun, { approve: true });
    const done = await waitForTurn(w.h.client, `${rerun}/turn-1`, { pollMs: 100 });
    expect(done).toMatchObject({ kind: 'done', result: { terminated_by: 'final_answer', steps: 3 } });
    expect(await w.take()).toEqual({ mcp: 1, http: 1, custom: 1 });
    const result = (done as { result: TurnResult }).result;
    expect(result.toolCalls.some((c) => c.replayed)).toBe(false);
    expect(result.toolCalls.find((c) => c.name === 'write_file')?.approval).toMatchObject({ approved: true, fromRecord: turnId });
  }, 180_000);
});
