/**
 * Two `harness worker` processes acting as two sandbox hosts (HARNESS_HOST_ID a and b, their own
 * HARNESS_HOME and workspaces, one shared Postgres), under the default policy: sessions are
 * spread over both; every sandbox and file call of a session lands on its own host's queue and
 * its files in that host's workspace; MCP servers start once per session, on its host; killing one host's worker
 * moves its sessions to the other, restoring the workspace the turn began with, and the model
 * reads what was lost.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { decideApprovals, sendMessage, sessionState } from '../../client/session-client';
import { waitForTurn, type TurnOutcome } from '../../client/turn-wait';
import { resolveSessionConfig } from '../../config/resolve';
import { workflowRuns } from '../../history/workflow-runs';
import { hostQueueOf } from '../../deterministic/host';
import type { SessionConfig } from '../../deterministic/session-config';
import { DEFAULT_POLICY, newSessionId, TEST_DATABASE_URL } from '../support/harness';
import { kill, spawnWorker } from '../support/processes';
import { cliEnv } from '../support/cli';
import { EVERYTHING } from '../support/mcp-servers';
import { figure } from '../support/figures';

const taskQueue = `two-hosts-${randomUUID()}`;
let client: Client;
let root: string;
const workers: Record<'a' | 'b', ChildProcess | undefined> = { a: undefined, b: undefined };
const homes = { a: '', b: '' };
let config: SessionConfig;

const envFor = (host: 'a' | 'b') => cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_TASK_QUEUE: taskQueue, HARNESS_HOME: homes[host], HARNESS_HOST_ID: host, DATABASE_URL: TEST_DATABASE_URL, HARNESS_CONFIG: path.join(root, 'harness.config.json') });

beforeAll(async () => {
  client = new Client({ connection: await Connection.connect({ address: inject('temporalAddress') }) });
  root = mkdtempSync(path.join(os.tmpdir(), 'harness-two-hosts-'));
  homes.a = path.join(root, 'host-a');
  homes.b = path.join(root, 'host-b');
  // An MCP server (counted per host by the worker that started it) and a short host timeout.
  const pids = path.join(root, 'mcp-pids');
  writeFileSync(
    path.join(root, 'harness.config.json'),
    JSON.stringify({
      limits: { hostTimeoutSec: 5 },
      mcpServers: { everything: { command: '/bin/sh', args: ['-c', `echo "$PPID $$" >> '${pids}'; exec '${process.execPath}' '${EVERYTHING}' stdio`], decision: 'allow' } },
    }),
  );
  writeFileSync(path.join(root, 'placeholder.json'), JSON.stringify({ steps: [{ content: 'x' }] }));
  config = { ...resolveSessionConfig({ config: path.join(root, 'harness.config.json'), model: `scripted:${path.join(root, 'placeholder.json')}` }, {}, root), policy: DEFAULT_POLICY };
}, 60_000);
afterAll(async () => {
  for (const w of Object.values(workers)) await kill(w, 'SIGKILL');
  await client?.connection.close();
  rmSync(root, { recursive: true, force: true });
});

/** The session config with a script of its own. */
function scripted(steps: unknown[]): SessionConfig {
  return { ...config, model: { provider: 'scripted', model: 'scripted', script: { steps } } };
}

/** Waits for a turn, approving every call the default policy asks about. */
async function approving(sessionId: string, outcome: TurnOutcome): Promise<Extract<TurnOutcome, { kind: 'done' }>> {
  let out = outcome;
  while (out.kind === 'waiting') {
    const p = out.state.pending;
    if (p?.kind !== 'approvals') throw new Error(`waits for something else: ${JSON.stringify(p)}`);
    await decideApprovals(client, sessionId, { calls: p.calls.map((c) => ({ callId: c.callId, digest: c.digest ?? '' })), approve: true });
    out = await waitForTurn(client, out.state.turnId, { pollMs: 100 });
  }
  return out;
}

async function turn(sessionId: string, steps: unknown[], text: string) {
  const { turnId } = await sendMessage(client, { taskQueue, sessionId, config: scripted(steps), text });
  return { turnId, out: await approving(sessionId, await waitForTurn(client, turnId, { pollMs: 100 })) };
}

/**
 * Until the session has taken its last turn's result: a worker that took the session over may
 * get that result and a new message in one task, and then refuses the message as too early.
 */
async function untilIdle(sessionId: string): Promise<void> {
  for (let i = 0; i < 120; i++) {
    const status = await sessionState(client, sessionId).then((st) => st.status, () => 'unknown');
    if (status === 'idle') return;
    await new Promise((res) => setTimeout(res, 250));
  }
  throw new Error(`session ${sessionId} never became idle`);
}

/** The task queues a turn's activities were scheduled on, by activity type. */
async function queuesOf(turnId: string): Promise<Map<string, Set<string>>> {
  const byType = new Map<string, Set<string>>();
  for (const run of await workflowRuns(client, turnId)) {
    for (const e of run.history.events ?? []) {
      const a = e.activityTaskScheduledEventAttributes;
      if (!a?.activityType?.name) continue;
      const set = byType.get(a.activityType.name) ?? new Set<string>();
      set.add(a.taskQueue?.name ?? '');
      byType.set(a.activityType.name, set);
    }
  }
  return byType;
}

/** How many executeTool activities of a turn's runs have completed. */
async function completedTools(turnId: string): Promise<number> {
  let n = 0;
  for (const run of await workflowRuns(client, turnId)) {
    const events = run.history.events ?? [];
    const tools = new Set(events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'executeTool').map((e) => String(e.eventId)));
    n += events.filter((e) => tools.has(String(e.activityTaskCompletedEventAttributes?.scheduledEventId ?? ''))).length;
  }
  return n;
}

const workspaceFile = (host: 'a' | 'b', sessionId: string, file: string) => path.join(homes[host], 'workspaces', sessionId, file);

it('spreads sessions over two hosts, runs every sandbox, file and MCP call on its own host, and moves the sessions of a host whose worker is gone', async () => {
  const write = (id: string) => ({ tool_calls: [{ name: 'write_file', arguments: { path: 'keep.txt', content: `${id}\n` } }] });
  const shell = { tool_calls: [{ name: 'run_shell', arguments: { command: 'cat keep.txt' } }] };
  const echo = { tool_calls: [{ name: 'mcp__everything__echo', arguments: { message: 'hi' } }] };
  const steps = (id: string) => [write(id), shell, echo, { content: `done ${id}` }];
  // The session that will move has its second turn in its script too (a script is the session's).
  const secondTurn = [
    { tool_calls: [{ name: 'write_file', arguments: { path: 'late.txt', content: 'lost\n' } }] },
    { fault: { delay_ms: 3_000 }, tool_calls: [{ name: 'read_file', arguments: { path: 'keep.txt' } }] },
    { expect: { last_message_contains: 'SANDBOX_HOST_LOST' }, tool_calls: [{ name: 'read_file', arguments: { path: 'keep.txt' } }] },
    { tool_calls: [{ name: 'read_file', arguments: { path: 'late.txt' } }] },
    { content: 'carried on' },
  ];

  // Sessions on a: only a runs.
  workers.a = await spawnWorker(envFor('a'));
  const onA = [newSessionId('ha'), newSessionId('ha')];
  for (const id of onA) await turn(id, id === onA[0] ? [...steps(id), ...secondTurn] : steps(id), 'write, read, echo');
  // a is stopped (it drains and exits) while b prepares its sessions, then comes back as host a.
  workers.b = await spawnWorker(envFor('b'));
  const hostOf = new Map([[String(workers.a.pid), 'a'], [String(workers.b.pid), 'b']]);
  await kill(workers.a, 'SIGTERM');
  const onB = [newSessionId('hb'), newSessionId('hb')];
  // The first of b's sessions has a second turn too: it finds b gone before it starts.
  const betweenTurns = [
    { expect: { messages_contain: 'is taken as lost' }, tool_calls: [{ name: 'read_file', arguments: { path: 'keep.txt' } }] },
    { expect: { last_message_contains: 'FILE_NOT_FOUND' }, content: 'started over' },
  ];
  for (const id of onB) await turn(id, id === onB[0] ? [...steps(id), ...betweenTurns] : steps(id), 'write, read, echo');
  workers.a = await spawnWorker(envFor('a'));

  for (const [host, ids] of [['a', onA], ['b', onB]] as const) {
    const other = host === 'a' ? 'b' : 'a';
    for (const id of ids) {
      expect((await sessionState(client, id)).host).toBe(host);
      // Its files on its own host only; its sandbox, file and MCP calls on its host's queue.
      expect(readFileSync(workspaceFile(host, id, 'keep.txt'), 'utf8')).toBe(`${id}\n`);
      expect(existsSync(workspaceFile(other, id, 'keep.txt'))).toBe(false);
      const queues = await queuesOf(`${id}/turn-1`);
      expect([...(queues.get('executeTool') ?? [])]).toEqual([hostQueueOf(taskQueue, host)]);
      // Model calls run in the turn's workflow task, or (a slow one, or after a write) as an activity on the shared queue or,
      // handed on, on the queue of the worker that holds the request: never on a host's.
      const notShared = (type: string) => [...(queues.get(type) ?? [])].filter((q) => q !== taskQueue);
      expect(notShared('checkpoint')).toEqual([]);
      for (const q of notShared('callModel')) expect(q.startsWith(`${taskQueue}/handoff-`), q).toBe(true);
    }
  }
  // One MCP server process per session, on its host (each session's discovery ran while only its host's worker did).
  const started = readFileSync(path.join(root, 'mcp-pids'), 'utf8').trim().split('\n').map((l) => hostOf.get(l.split(' ')[0]!) ?? l);
  expect(started.sort()).toEqual(['a', 'a', 'b', 'b']);

  // Host a dies with a turn in flight: its first call (a write) ran on a, its next model call is
  // slow, the kill lands there, and the call after it waits for a's queue until the host timeout.
  const moved = onA[0]!;
  await untilIdle(moved);
  const { turnId } = await sendMessage(client, { taskQueue, sessionId: moved, config: scripted([]), text: 'go on' });
  const asked = await waitForTurn(client, turnId, { pollMs: 100 });
  if (asked.kind !== 'waiting' || asked.state.pending?.kind !== 'approvals') throw new Error(`expected the write to ask: ${JSON.stringify(asked)}`);
  await decideApprovals(client, moved, { calls: asked.state.pending.calls.map((c) => ({ callId: c.callId, digest: c.digest ?? '' })), approve: true });
  // Killed once the write's completion is in history, not when its file appears: a kill between
  // the two would leave the write itself to be retried and lost, a different story.
  for (let i = 0; i < 400 && (await completedTools(turnId)) < 1; i++) await new Promise((res) => setTimeout(res, 50));
  expect(await completedTools(turnId)).toBe(1);
  expect(existsSync(workspaceFile('a', moved, 'late.txt'))).toBe(true);
  await kill(workers.a, 'SIGKILL');
  const killedAt = Date.now();
  const done = await approving(moved, await waitForTurn(client, turnId, { pollMs: 100 }));
  const r = done.result;
  expect(r.terminated_by, JSON.stringify({ error: r.error, toolCalls: r.toolCalls, hostMoves: r.hostMoves })).toBe('final_answer');
  expect(r.host?.id).toBe('b');
  expect(r.hostMoves).toEqual([{ step: 2, from: 'a', to: 'b' }]);
  // The call that found its host gone did not run; the model read what was lost and carried on.
  expect(r.toolCalls.map((c) => [c.name, c.ok ? 'ok' : c.error_type])).toEqual([
    ['write_file', 'ok'],
    ['read_file', 'SANDBOX_HOST_LOST'],
    ['read_file', 'ok'],
    ['read_file', 'FILE_NOT_FOUND'],
  ]);
  figure('two-hosts', `session moved from host a to b ${Date.now() - killedAt} ms after a's worker was killed (host timeout 5 s)`);
  // On b: the workspace as the turn began (keep.txt), not what a wrote during it (late.txt).
  expect(readFileSync(workspaceFile('b', moved, 'keep.txt'), 'utf8')).toBe(`${moved}\n`);
  expect(existsSync(workspaceFile('b', moved, 'late.txt'))).toBe(false);
  expect((await sessionState(client, moved)).host).toBe('b');
  // Sessions of b never noticed.
  for (const id of onB) expect((await sessionState(client, id)).host).toBe('b');
  expect(readdirSync(path.join(homes.b, 'workspaces')).sort()).toEqual([...onB, moved].sort());

  // Host b dies between turns (a is back): b's session starts its next turn on a, told what it
  // lost, with an empty workspace.
  workers.a = await spawnWorker(envFor('a'));
  await kill(workers.b, 'SIGKILL');
  await untilIdle(onB[0]!);
  const next = await turn(onB[0]!, [], 'and now?');
  figure('two-hosts', 'a session whose host died between turns started its next turn on the other host, told so');
  expect(next.out.result).toMatchObject({ terminated_by: 'final_answer', answer: 'started over', host: { id: 'a' }, hostMoves: [{ step: 0, from: 'b', to: 'a' }] });
  expect((await sessionState(client, onB[0]!)).host).toBe('a');
}, 300_000);
