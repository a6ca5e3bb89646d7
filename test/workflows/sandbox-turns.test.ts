// The Docker sandbox through real turns: a real worker, a real SandboxPool and the real Docker
// Engine (no skips: without Docker these tests fail, as CI must run them).
import { existsSync, lstatSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SandboxPool } from '../../activities/sandbox/pool';
import { LABELS, removeOrphans } from '../../activities/sandbox/containers';
import { parsePolicy } from '../../deterministic/policy/schema';
import type { TurnResult } from '../../deterministic/session';
import type { SessionConfig } from '../../deterministic/session-config';
import type { ChatMessage, ToolResult } from '../../deterministic/types';
import { decideApprovals, endSession, sessionState } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { freezePolicy } from '../../deterministic/policy';
import { DEFAULT_POLICY, newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';

const docker = new Docker();
let home: string;
let pool: SandboxPool;
let h: TestHarness;

beforeAll(async () => {
  // Real path: the container's mount source is compared with the resolved workspace path.
  home = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'harness-sbt-')));
  // Our own pool, so a test can reach a session's container the way the worker does.
  pool = new SandboxPool({ home });
  h = await startHarness({ home, sandboxes: pool });
});

afterAll(async () => {
  await h?.stop();
  if (home) {
    await removeOrphans(docker, [], { home }).catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
  }
});

/** The tool results the turn sent back to the model, in order. */
function toolResults(messages: ChatMessage[]): ToolResult[] {
  return messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content) as ToolResult);
}

/** What run_shell returned (on success and on failure). */
function shellOutput(r: ToolResult): { exit_code: number; stdout: string; stderr: string } {
  return r.result as { exit_code: number; stdout: string; stderr: string };
}

/** Every container (running or not) of a session of this file's home. */
async function containersOf(sessionId: string): Promise<Docker.ContainerInfo[]> {
  return docker.listContainers({
    all: true,
    filters: { label: [`${LABELS.session}=${sessionId}`, `${LABELS.home}=${home}`] },
  });
}

// The container's hostname (its id): not an inspection command, so it asks under the default policy.
const HOSTNAME = 'uname -n';

// Every test runs under the default policy, as a user does: a person approves what asks.
describe('the sandbox through real turns', () => {
  it('reads in the next turn the files written in one turn, in the same reused container', async () => {
    const sessionId = newSessionId('sbt');
    const config = scriptedConfig({
      steps: [
        // turn 1
        { tool_calls: [{ name: 'run_shell', arguments: { command: `echo hello > notes.txt && ${HOSTNAME}` } }] },
        { expect: { last_message_contains: '"exit_code":0' }, content: 'Notes written. HARNESS_OK' },
        // turn 2
        { tool_calls: [{ name: 'run_shell', arguments: { command: `cat notes.txt && ${HOSTNAME}` } }] },
        { expect: { last_message_contains: '"stdout":"hello\\n' }, content: 'The notes say hello. HARNESS_OK' },
      ],
    }, {}, DEFAULT_POLICY);

    const first = await h.finishApproving(sessionId, config, 'write the notes');
    expect(first.terminated_by).toBe('final_answer');
    expect(first.asked).toEqual([`run_shell: echo hello > notes.txt && ${HOSTNAME}`]);
    const [written] = toolResults(first.messages);
    expect(written).toMatchObject({ ok: true });
    const host1 = shellOutput(written!).stdout.trim();
    expect(host1).toMatch(/^[0-9a-f]{12}$/);
    expect(readFileSync(path.join(home, 'workspaces', sessionId, 'notes.txt'), 'utf8')).toBe('hello\n');

    const second = await h.finishApproving(sessionId, config, 'what do the notes say?');
    expect(second.terminated_by).toBe('final_answer');
    expect(second.answer).toBe('The notes say hello. HARNESS_OK');
    // The whole conversation: the first turn's result, then this turn's.
    const [, read] = toolResults(second.messages!);
    expect(read).toMatchObject({ ok: true });
    const [content, host2] = shellOutput(read!).stdout.split('\n');
    expect(content).toBe('hello');
    // Same container: same hostname, and exactly one container carries the session's label.
    expect(host2).toBe(host1);
    const boxes = await containersOf(sessionId);
    expect(boxes).toHaveLength(1);
    expect(boxes[0]!.Id.startsWith(host1)).toBe(true);
    expect(boxes[0]!.State).toBe('running');
  });

  it('ends every row of the bad-input table in a structured error under the default rules in ask mode, the session still running', async () => {
    const sessionId = newSessionId('sbt');
    // A symlink to /etc made inside the container (where `ln -s /etc` is harmless), left in
    // the shared workspace for the host file tools to meet.
    const made = await pool.get(sessionId).exec('ln -s /etc etc-link', { timeoutMs: 30_000 });
    expect(made).toMatchObject({ exitCode: 0, timedOut: false });
    expect(lstatSync(path.join(home, 'workspaces', sessionId, 'etc-link')).isSymbolicLink()).toBe(true);

    type Row = { tool: string; args: Record<string, unknown>; error_type?: string; rule: string };
    const table: Row[] = [
      { tool: 'read_file', args: { path: '../../etc/passwd' }, error_type: 'PERMISSION_DENIED', rule: 'deny-outside-workspace' },
      { tool: 'read_file', args: { path: '/etc/passwd' }, error_type: 'PERMISSION_DENIED', rule: 'deny-outside-workspace' },
      // The policy cannot see the link (the path is relative); the host file tool refuses it.
      { tool: 'read_file', args: { path: 'etc-link/passwd' }, error_type: 'PATH_OUTSIDE_WORKSPACE', rule: 'allow-read-only-tools' },
      { tool: 'list_files', args: { path: 'etc-link' }, error_type: 'PATH_OUTSIDE_WORKSPACE', rule: 'allow-read-only-tools' },
      { tool: 'run_shell', args: { command: 'rm -rf /' }, error_type: 'PERMISSION_DENIED', rule: 'deny-rm-recursive' },
      { tool: 'run_shell', args: { command: 'sudo ls' }, error_type: 'PERMISSION_DENIED', rule: 'deny-privilege' },
      { tool: 'run_shell', args: { command: 'curl http://x' }, error_type: 'PERMISSION_DENIED', rule: 'deny-network-tools' },
      { tool: 'run_shell', args: { command: 'echo $(curl x)' }, error_type: 'PERMISSION_DENIED', rule: 'deny-network-tools' },
      { tool: 'run_shell', args: { command: '`wget x`' }, error_type: 'PERMISSION_DENIED', rule: 'deny-network-tools' },
      { tool: 'run_shell', args: { command: 'bash -c "rm -rf /"' }, error_type: 'PERMISSION_DENIED', rule: 'deny-rm-recursive' },
      { tool: 'run_shell', args: { command: 'ls; sudo id' }, error_type: 'PERMISSION_DENIED', rule: 'deny-privilege' },
      { tool: 'run_shell', args: { command: 'env A=1 sudo id' }, error_type: 'PERMISSION_DENIED', rule: 'deny-privilege' },
      { tool: 'run_shell', args: { command: 'find . -exec rm -rf {} +' }, error_type: 'PERMISSION_DENIED', rule: 'deny-rm-recursive' },
      // Not an error: inside the container the link leads to the container's own /etc.
      { tool: 'run_shell', args: { command: 'cat etc-link/passwd' }, rule: 'allow-inspection' },
    ];
    const unparsable = 'echo "unterminated';
    const steps: unknown[] = [];
    table.forEach((row, i) => {
      const prev = i > 0 ? table[i - 1]!.error_type : undefined;
      steps.push({ ...(prev ? { expect: { last_message_contains: prev } } : {}), tool_calls: [{ name: row.tool, arguments: row.args }] });
    });
    steps.push({ expect: { last_message_contains: '"exit_code":0' }, tool_calls: [{ name: 'run_shell', arguments: { command: unparsable } }] });
    steps.push({ expect: { last_message_contains: 'APPROVAL_DENIED' }, content: 'Nothing bad happened. HARNESS_OK' });
    // turn 2: the session still works
    steps.push({ tool_calls: [{ name: 'run_shell', arguments: { command: 'ls' } }] });
    steps.push({ expect: { last_message_contains: 'etc-link' }, content: 'Still here. HARNESS_OK' });
    const config: SessionConfig = scriptedConfig({ steps }, { errorLimit: 100, maxSteps: 40 }, DEFAULT_POLICY);

    // The unparsable command is the last call: it asks, so the turn waits for a human.
    const out = await h.turn(sessionId, config, 'try the bad inputs');
    if (out.kind !== 'waiting') throw new Error(`expected the turn to wait, got ${JSON.stringify(out.result.toolCalls)}`);
    expect(out.state.status).toBe('waiting_for_approval');
    expect(out.state.pending).toMatchObject({
      kind: 'approvals',
      calls: [{ tool: 'run_shell', args: { command: unparsable }, rule: 'unparsable' }],
    });
    await vi.waitFor(async () => expect((await sessionState(h.client, sessionId)).status).toBe('waiting_for_approval'), {
      timeout: 20_000,
      interval: 100,
    });
    const { turnId } = await decideApprovals(h.client, sessionId, { approve: false, reason: 'cannot tell what it runs' });
    const done = await waitForTurn(h.client, turnId, { pollMs: 100 });
    if (done.kind !== 'done') throw new Error(`turn still waiting: ${JSON.stringify(done.state)}`);
    const r: TurnResult = await h.complete(done.result);

    expect(r.terminated_by).toBe('final_answer');
    expect(r.answer).toBe('Nothing bad happened. HARNESS_OK');
    const expected = [...table.map((row) => row.error_type), 'APPROVAL_DENIED'];
    expect(r.toolCalls.map((c) => c.error_type)).toEqual(expected);
    expect(r.toolCalls.map((c) => c.name)).toEqual([...table.map((row) => row.tool), 'run_shell']);
    expect(r.toolCalls.map((c) => c.step)).toEqual(expected.map((_, i) => i + 1));
    table.forEach((row, i) => {
      expect(r.toolCalls[i], JSON.stringify(row.args)).toMatchObject({ args: row.args, policy: { rule: row.rule } });
    });
    expect(r.toolCalls.at(-1)).toMatchObject({
      policy: { decision: 'ask', rule: 'unparsable' },
      approval: expect.objectContaining({ approved: false, reason: 'cannot tell what it runs' }),
    });

    const results = toolResults(r.messages!);
    expect(results).toHaveLength(expected.length);
    results.forEach((res, i) => {
      if (expected[i] === undefined) return;
      expect(res, JSON.stringify(r.toolCalls[i]!.args)).toMatchObject({ ok: false, error_type: expected[i], recoverable: true });
      expect(typeof res.message).toBe('string');
    });
    // No host file was read: the refusals carry no passwd content.
    for (const res of results.slice(0, 4)) expect(JSON.stringify(res)).not.toContain('root:');
    // The one allowed command read the container's /etc/passwd, not the host's.
    const own = await pool.get(sessionId).exec('cat /etc/passwd', { timeoutMs: 30_000 });
    expect(results[table.length - 1]).toMatchObject({ ok: true });
    expect(shellOutput(results[table.length - 1]!).stdout).toBe(own.stdout);

    // Still running: idle, and another turn completes.
    expect((await sessionState(h.client, sessionId)).status).toBe('idle');
    const next = await h.finish(sessionId, config, 'are you still there?');
    expect(next.terminated_by).toBe('final_answer');
    expect(next.answer).toBe('Still here. HARNESS_OK');
    expect(next.toolCalls).toEqual([expect.objectContaining({ name: 'run_shell', ok: true })]);
    expect((await sessionState(h.client, sessionId)).status).toBe('idle');
  });

  it('denies an unparsable command with PERMISSION_DENIED in a strict session and goes on', async () => {
    const sessionId = newSessionId('sbt');
    const r = await h.finish(
      sessionId,
      scriptedConfig(
        {
          steps: [
            { tool_calls: [{ name: 'run_shell', arguments: { command: 'echo "unterminated' } }] },
            { expect: { last_message_contains: 'PERMISSION_DENIED' }, content: 'It cannot be analysed. HARNESS_OK' },
          ],
        },
        {},
        freezePolicy(parsePolicy({ mode: 'strict' })),
      ),
      'run it',
    );
    expect(r.terminated_by).toBe('final_answer');
    expect(r.toolCalls).toEqual([
      expect.objectContaining({ name: 'run_shell', ok: false, error_type: 'PERMISSION_DENIED', policy: expect.objectContaining({ decision: 'deny', rule: 'mode strict' }) }),
    ]);
    expect(toolResults(r.messages)[0]!.message).toMatch(/cannot be analysed/);
    expect((await sessionState(h.client, sessionId)).status).toBe('idle');
  });

  it('reports a run_shell timeout as COMMAND_TIMEOUT and a non-zero exit as EXECUTION_ERROR with its exit code', async () => {
    const r = await h.finishApproving(
      newSessionId('sbt'),
      scriptedConfig(
        {
          steps: [
            { tool_calls: [{ name: 'run_shell', arguments: { command: 'sleep 1000', timeout_ms: 1000 } }] },
            { expect: { last_message_contains: 'COMMAND_TIMEOUT' }, tool_calls: [{ name: 'run_shell', arguments: { command: 'exit 3' } }] },
            { expect: { last_message_contains: '"exit_code":3' }, tool_calls: [{ name: 'run_shell', arguments: { command: 'echo broken-widget >&2; exit 4' } }] },
            { expect: { last_message_contains: 'broken-widget' }, content: 'Commands fail as expected. HARNESS_OK' },
          ],
        },
        { errorLimit: 10 },
        DEFAULT_POLICY,
      ),
      'run things that fail',
    );
    expect(r.terminated_by).toBe('final_answer');
    expect(r.toolCalls.map((c) => c.error_type)).toEqual(['COMMAND_TIMEOUT', 'EXECUTION_ERROR', 'EXECUTION_ERROR']);
    const [timeout, exit3, exit4] = toolResults(r.messages);
    expect(timeout).toMatchObject({ ok: false, error_type: 'COMMAND_TIMEOUT', recoverable: true });
    expect(timeout!.message).toMatch(/1000 ms/);
    expect(exit3).toMatchObject({ ok: false, error_type: 'EXECUTION_ERROR', result: { exit_code: 3 } });
    expect(exit3!.message).toMatch(/code 3/);
    expect(exit4).toMatchObject({ ok: false, error_type: 'EXECUTION_ERROR', result: { exit_code: 4, stderr: 'broken-widget\n' } });
    expect(exit4!.message).toMatch(/code 4.*broken-widget/);
  });

  it("removes the session container and its exactly-once records when the session ends, keeping the workspace", async () => {
    const sessionId = newSessionId('sbt');
    const r = await h.finishApproving(
      sessionId,
      scriptedConfig(
        {
          steps: [
            { tool_calls: [{ name: 'run_shell', arguments: { command: 'echo kept > kept.txt' } }] },
            { expect: { last_message_contains: '"exit_code":0' }, tool_calls: [{ name: 'write_file', arguments: { path: 'log.txt', content: 'x', append: true } }] },
            { expect: { last_message_contains: '"ok":true' }, content: 'Done. HARNESS_OK' },
          ],
        },
        {},
        DEFAULT_POLICY,
      ),
      'make a container',
    );
    expect(r.terminated_by).toBe('final_answer');
    expect(await containersOf(sessionId)).toHaveLength(1);
    const records = [path.join(home, 'applied', sessionId), path.join(home, 'execs', sessionId)];
    for (const dir of records) expect(existsSync(dir), dir).toBe(true);

    await endSession(h.client, sessionId, 'test over');
    expect(await h.client.workflow.getHandle(sessionId).result()).toEqual({ sessionId, turns: 1 });
    expect(await containersOf(sessionId)).toEqual([]);
    for (const dir of records) expect(existsSync(dir), dir).toBe(false);
    expect(readFileSync(path.join(home, 'workspaces', sessionId, 'kept.txt'), 'utf8')).toBe('kept\n');
  });
});

describe('without Docker', () => {
  it('gives run_shell SANDBOX_UNAVAILABLE, the turn continues to a final answer and the session can still end', async () => {
    const downHome = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'harness-sbt-down-')));
    const down = await startHarness({
      home: downHome,
      sandboxes: new SandboxPool({ home: downHome, docker: new Docker({ socketPath: '/nonexistent.sock' }) }),
    });
    try {
      const sessionId = newSessionId('sbt');
      const r = await down.finishApproving(
        sessionId,
        scriptedConfig(
          {
            steps: [
              { tool_calls: [{ name: 'run_shell', arguments: { command: 'echo hi' } }] },
              { expect: { last_message_contains: 'SANDBOX_UNAVAILABLE' }, tool_calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'hi' } }] },
              { expect: { last_message_contains: '"ok":true' }, content: 'Used the file tools instead. HARNESS_OK' },
            ],
          },
          {},
          DEFAULT_POLICY,
        ),
        'say hi',
      );
      // `echo` runs without asking; the file write asks.
      expect(r.asked).toEqual(['write_file: {"path":"a.txt","content":"hi"}']);
      expect(r.terminated_by).toBe('final_answer');
      expect(r.answer).toBe('Used the file tools instead. HARNESS_OK');
      expect(r.toolCalls.map((c) => [c.name, c.ok, c.error_type])).toEqual([
        ['run_shell', false, 'SANDBOX_UNAVAILABLE'],
        ['write_file', true, undefined],
      ]);
      const [unavailable] = toolResults(r.messages);
      expect(unavailable).toMatchObject({ ok: false, error_type: 'SANDBOX_UNAVAILABLE', recoverable: true });
      expect(unavailable!.message).toMatch(/not reachable/);

      // Ending the session tries to remove a container on an engine that is not there: it still ends.
      await endSession(down.client, sessionId);
      expect(await down.client.workflow.getHandle(sessionId).result()).toEqual({ sessionId, turns: 1 });
    } finally {
      await down.stop();
      rmSync(downHome, { recursive: true, force: true });
    }
  });
});
