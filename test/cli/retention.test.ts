/**
 * Retention from the CLI against a real Temporal server, a real worker (its HARNESS_HOME, its
 * Docker sandboxes, its message store in real Postgres): `harness end --purge` and
 * `harness sessions prune`. What a session stored is deleted on the worker; long-term memory
 * and other sessions' data stay; a running session is never pruned; a bad age is a usage error.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import Docker from 'dockerode';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../activities/memory/database';
import { LABELS } from '../../activities/sandbox/containers';
import { SandboxPool } from '../../activities/sandbox/pool';
import { decideApprovals, endSession, sendMessage } from '../../client/session-client';
import { waitForTurn, type TurnOutcome } from '../../client/turn-wait';
import type { SessionConfig } from '../../deterministic/session-config';
import { DEFAULT_POLICY, newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';
import { cliEnv, describeResult, parseJson, removeTempDirs, runCli, stackLines, tempDir } from '../support/cli';
import { TEST_DATABASE_URL } from '../activities/memory/backends';
import { startEval } from '../../evals/runner/run';
import { parseSuite } from '../../evals/runner/suite';

const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const docker = new Docker();

let h: TestHarness;
let home: string;
let memory: Database;
let pool: SandboxPool;
let admin: pg.Client;
let schema: string;
let env: NodeJS.ProcessEnv;
const cli = (args: string[]) => runCli(args, { env, timeoutMs: 120_000 });

/** Rows the session has in the message store (both tables), read by the test's own client. */
async function storedRows(sessionId: string): Promise<number> {
  const r = await admin.query<{ n: string }>(
    `SELECT (SELECT count(*) FROM ${schema}.message_blobs WHERE session_id = $1) + (SELECT count(*) FROM ${schema}.message_nodes WHERE session_id = $1)
       + (SELECT count(*) FROM ${schema}.eval_trials WHERE session_id = $1) + (SELECT count(*) FROM ${schema}.call_claims WHERE session_id = $1) AS n`,
    [sessionId],
  );
  return Number(r.rows[0]!.n);
}

/** Stores a one-message conversation for the session, as the worker's activities do. */
async function storeConversation(sessionId: string): Promise<void> {
  const store = await memory.messages();
  const body = JSON.stringify({ role: 'user', content: `hello from ${sessionId}` });
  await store.putBlobs(sessionId, [{ hash: sha(body), body }]);
  await store.putNodes(sessionId, [{ hash: sha(`:${sha(body)}`), parent: null, blob: sha(body) }]);
}

/** Folders and files a session leaves on the worker, made by hand (as a turn would). */
function seedFolders(sessionId: string): string[] {
  const made = [`workspaces/${sessionId}`, `execs/${sessionId}`, `applied/${sessionId}`];
  for (const rel of made) {
    mkdirSync(path.join(home, rel, 'sub'), { recursive: true });
    writeFileSync(path.join(home, rel, 'sub', 'file.txt'), 'data');
  }
  return made;
}

const onDisk = (rel: string) => existsSync(path.join(home, rel));

async function containersOf(sessionId: string): Promise<Docker.ContainerInfo[]> {
  return docker.listContainers({ all: true, filters: { label: [`${LABELS.session}=${sessionId}`, `${LABELS.home}=${home}`] } });
}

/** Runs a turn as the CLI does (the session's conversation stays in the worker's store). */
async function runTurn(sessionId: string, config: SessionConfig, text: string): Promise<TurnOutcome> {
  const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config, text });
  return waitForTurn(h.client, turnId, { pollMs: 100 });
}

/** A session that has started and waits for messages (no turn run). */
async function startIdleSession(sessionId: string): Promise<void> {
  await h.client.workflow.start('sessionWorkflow', {
    taskQueue: h.taskQueue,
    workflowId: sessionId,
    args: [{ sessionId, config: scriptedConfig({ steps: [{ content: 'unused' }] }) }],
  });
  // A scripted session stores its script at start (its first row): wait for it, so the rows
  // counted before a prune are all the session will have.
  for (const deadline = Date.now() + 20_000; (await storedRows(sessionId)) === 0; ) {
    if (Date.now() > deadline) throw new Error(`session ${sessionId} stored nothing within 20 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  schema = `retention_${randomBytes(6).toString('hex')}`;
  admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
  await admin.query(`CREATE SCHEMA ${schema}`);
  home = mkdtempSync(path.join(os.tmpdir(), 'harness-retention-'));
  memory = new Database({ home, databaseUrl: `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema},public`)}` });
  pool = new SandboxPool({ home });
  h = await startHarness({ home, memory, sandboxes: pool, messageStore: () => memory.messages() });
  const dir = tempDir('harness-cli-retention-');
  // The CLI's own HARNESS_HOME is not the worker's: everything is deleted on the worker.
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(dir, 'cli-home') });
});

afterAll(async () => {
  await h?.stop();
  await memory?.close();
  await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin?.end();
  if (home) rmSync(home, { recursive: true, force: true });
  removeTempDirs();
});

describe('harness end --purge', () => {
  it("ends an idle session and deletes its stored messages, workspace and script, keeping long-term memory and other sessions' data", async () => {
    const sessionId = newSessionId('ret-end');
    const other = newSessionId('ret-other');
    // Under the default policy the write asks; the person approves it.
    const r1 = await h.finishApproving(
      sessionId,
      scriptedConfig({ steps: [{ tool_calls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'kept?', append: true } }] }, { content: 'Done.' }] }),
      'write notes',
    );
    expect(r1).toMatchObject({ terminated_by: 'final_answer', asked: ['write_file: {"path":"notes.txt","content":"kept?","append":true}'] });
    expect(onDisk(`workspaces/${sessionId}/notes.txt`)).toBe(true);
    // The script is in the message store (a file under the home only without one): purged with its rows.
    expect(onDisk(`scripts/${sessionId}.json`)).toBe(false);
    await storeConversation(sessionId);
    await storeConversation(other);
    await (await memory.store()).remember('team', sessionId, 'A note that outlives the session');

    const r = await cli(['end', sessionId, '--purge']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.errLines[0]).toBe(`session ${sessionId} ended`);
    expect(r.errLines[1]).toMatch(new RegExp(`^purged ${sessionId}: \\d+ message-store row\\(s\\); removed workspaces/${sessionId}$`));
    expect(r.errLines).toHaveLength(2);

    expect(await storedRows(sessionId)).toBe(0);
    expect(await storedRows(other)).toBe(2);
    expect(onDisk(`workspaces/${sessionId}`)).toBe(false);
    expect(onDisk(`scripts/${sessionId}.json`)).toBe(false);
    expect((await (await memory.store()).recent('team', 5)).map((m) => m.text)).toEqual(['A note that outlives the session']);
    const result = await h.client.workflow.getHandle(sessionId).result();
    expect(result).toMatchObject({ sessionId, turns: 1, purged: { sessionId, sandboxRemoved: true, problems: [] } });
  });

  it('purges a session that is already over (terminated, so never closed) through the worker, its container included', async () => {
    const sessionId = newSessionId('ret-over');
    await startIdleSession(sessionId);
    await pool.get(sessionId).ensure();
    expect(await containersOf(sessionId)).toHaveLength(1);
    const made = seedFolders(sessionId);
    await storeConversation(sessionId);
    await h.client.workflow.getHandle(sessionId).terminate('test: a crashed session');
    const rows = await storedRows(sessionId);

    const r = await cli(['end', sessionId, '--purge']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.errLines).toEqual([`session ${sessionId} had already ended`, `purged ${sessionId}: ${rows} message-store row(s); removed ${made.join(', ')}`]);
    expect(await containersOf(sessionId)).toEqual([]);
    for (const rel of made) expect(onDisk(rel), rel).toBe(false);
    expect(await storedRows(sessionId)).toBe(0);
  });

  it('purges at the end of the running turn when asked while the turn waits for a person', async () => {
    const sessionId = newSessionId('ret-busy');
    const script = { steps: [{ tool_calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'x' } }] }, { content: 'Done after the decision.' }] };
    const out = await runTurn(sessionId, scriptedConfig(script, {}, DEFAULT_POLICY), 'write a.txt');
    expect(out.kind).toBe('waiting');
    await storeConversation(sessionId);
    const rows = await storedRows(sessionId);

    const r = await cli(['end', sessionId, '--purge']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.errLines).toEqual([`session ${sessionId} ends once its current turn is done, and then deletes what it stored`]);
    expect(await storedRows(sessionId)).toBe(rows); // nothing deleted under a running turn

    await decideApprovals(h.client, sessionId, { approve: false, reason: 'not now' });
    const result = await h.client.workflow.getHandle(sessionId).result();
    expect(result).toMatchObject({ sessionId, turns: 1, purged: { sessionId, problems: [] } });
    expect(await storedRows(sessionId)).toBe(0);
    expect(onDisk(`scripts/${sessionId}.json`)).toBe(false);
  });
});

describe('harness sessions prune', () => {
  const closed = newSessionId('ret-closed');
  const running = newSessionId('ret-running');
  const storeOnly = newSessionId('ret-forgotten'); // Temporal has no record of it (its retention dropped it)
  let closedFolders: string[];
  let runningFolders: string[];
  const rowsBefore = new Map<string, number>();

  beforeAll(async () => {
    await startIdleSession(closed);
    await endSession(h.client, closed);
    await h.client.workflow.getHandle(closed).result();
    closedFolders = seedFolders(closed); // after its end, which removes records of its own
    await storeConversation(closed);
    await startIdleSession(running);
    runningFolders = seedFolders(running);
    await storeConversation(running);
    await storeConversation(storeOnly);
    mkdirSync(path.join(home, 'workspaces', storeOnly), { recursive: true });
    for (const id of [closed, running, storeOnly]) rowsBefore.set(id, await storedRows(id));
  });

  it('refuses an age it cannot read with a usage error and a hint, before contacting anything', async () => {
    for (const age of ['30x', 'soon', '-5d', '1.5h']) {
      const r = await cli(['sessions', 'prune', '--older-than', age]);
      expect(r.code, describeResult(r)).toBe(2);
      expect(r.errLines).toEqual([
        `error: --older-than must be an age like 30d, 12h or 90m, not ${JSON.stringify(age)}`,
        'hint: give a whole number followed by d (days), h (hours), m (minutes) or s (seconds), e.g. --older-than 30d',
      ]);
      expect(stackLines(r.stderr)).toEqual([]);
    }
    const missing = await cli(['sessions', 'prune']);
    expect(missing.code, describeResult(missing)).toBe(2);
    expect(missing.errLines[0]).toMatch(/^error: .*--older-than/);
    expect(missing.errLines[1]).toMatch(/^hint: /);
  });

  it('lists with --dry-run the sessions over for longer than the age, deleting nothing, and never a running one', async () => {
    const recent = await cli(['sessions', 'prune', '--older-than', '1h', '--dry-run']);
    expect(recent.code, describeResult(recent)).toBe(0);
    expect(recent.stdout).toBe('');
    expect(recent.errLines).toEqual([expect.stringMatching(new RegExp(`^nothing to prune: no session of task queue ${h.taskQueue} ended before `))]);

    const r = await cli(['sessions', 'prune', '--older-than', '0s', '--dry-run']);
    expect(r.code, describeResult(r)).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^would purge ${closed} \\(completed \\d{4}-`)));
    expect(lines).toContain(`would purge ${storeOnly} (no longer known to Temporal; last stored data is older)`);
    expect(r.stdout).not.toContain(running);
    expect(lines.at(-1)).toMatch(/^\d+ session\(s\) would be purged \(dry run: nothing was deleted\)$/);
    for (const rel of closedFolders) expect(onDisk(rel), rel).toBe(true);
    expect(await storedRows(closed)).toBe(rowsBefore.get(closed));
  });

  it('purges the sessions that are over, printing each and a total (--json), and leaves the running session untouched', async () => {
    const r = await cli(['sessions', 'prune', '--older-than', '0s', '--json']);
    expect(r.code, describeResult(r)).toBe(0);
    const out = parseJson<{ dry_run: boolean; sessions: { session_id: string; status: string; purged?: { store_rows: number; removed: string[] } }[]; purged: number; failed: number }>(r);
    expect(out).toMatchObject({ dry_run: false, failed: 0 });
    expect(out.purged).toBe(out.sessions.length);
    const byId = new Map(out.sessions.map((s) => [s.session_id, s]));
    expect(byId.get(closed)).toMatchObject({ status: 'completed', purged: { store_rows: rowsBefore.get(closed), removed: closedFolders } });
    expect(byId.get(storeOnly)).toMatchObject({ status: 'unknown', purged: { store_rows: rowsBefore.get(storeOnly), removed: [`workspaces/${storeOnly}`] } });
    expect(byId.has(running)).toBe(false);

    for (const rel of closedFolders) expect(onDisk(rel), rel).toBe(false);
    expect(await storedRows(closed)).toBe(0);
    expect(await storedRows(storeOnly)).toBe(0);
    for (const rel of runningFolders) expect(onDisk(rel), rel).toBe(true);
    expect(await storedRows(running)).toBe(rowsBefore.get(running));
    const desc = await h.client.workflow.getHandle(running).describe();
    expect(desc.status.name).toBe('RUNNING');

    // Human output: one line per session and a total; nothing left of those purged just now.
    const again = await cli(['sessions', 'prune', '--older-than', '0s']);
    expect(again.code, describeResult(again)).toBe(0);
    const lines = again.stdout.trim().split('\n');
    expect(lines).toContain(`purged ${closed}: 0 message-store row(s); no files to remove`);
    expect(lines.at(-1)).toBe(`purged ${lines.length - 1} of ${lines.length - 1} session(s)`);
  });

  it('works after an eval ran: its trials (sessions of their own) are purged like sessions', async () => {
    const suite = path.join(tempDir('harness-retention-eval-'), 'suite.jsonl');
    writeFileSync(suite, JSON.stringify({ id: 'hello', input: 'Say hello.', model_script: { steps: [{ content: 'hello' }] }, checks: [{ type: 'contains', value: 'hello' }] }));
    const ev = await cli(['eval', suite, '--json', '--out', path.join(path.dirname(suite), 'report.json')]);
    expect(ev.code, describeResult(ev)).toBe(0);
    const trial = `${parseJson<{ eval_id: string }>(ev).eval_id}-hello-t1`;
    const rows = await storedRows(trial);
    expect(rows).toBeGreaterThan(0);

    const r = await cli(['sessions', 'prune', '--older-than', '0s']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout.split('\n')).toContainEqual(expect.stringMatching(new RegExp(`^purged ${trial}: ${rows} message-store row\\(s\\)`)));
    expect(await storedRows(trial)).toBe(0);
    expect(stackLines(r.stderr)).toEqual([]);
  }, 180_000);

  it('leaves a trial whose turn still runs (the trial has no workflow of its own), and `end` or `status` of its id says it is a trial', async () => {
    const suite = parseSuite(JSON.stringify({ id: 'slow', input: 'Take your time.', model_script: { steps: [{ tool_calls: [{ name: 'get_current_time', arguments: {} }] }, { fault: { delay_ms: 120_000 }, content: 'late' }] }, checks: [] }), 'slow.jsonl');
    const evalId = await startEval(h.client, h.taskQueue, suite, { concurrency: 1, trials: 1, config: scriptedConfig({ steps: [] }, {}, DEFAULT_POLICY), model: 'scripted', scriptedPerCase: true });
    const trial = `${evalId}-slow-t1`;
    try {
      // The turn stores the conversation with each model reply: step 1's is stored, step 2's call then waits two minutes.
      const calling = async () => (await h.client.workflow.getHandle(`${trial}/turn-1`).describe().catch(() => undefined))?.raw.pendingActivities?.some((a) => a.activityType?.name === 'callModel');
      for (let i = 0; i < 300 && !(await calling()); i++) await sleep(100);
      let rows = -1;
      for (let i = 0; i < 100 && (rows <= 0 || rows !== (await storedRows(trial))); i++) {
        rows = await storedRows(trial);
        await sleep(300);
      }
      expect(rows).toBeGreaterThan(0);
      await expect(h.client.workflow.getHandle(trial).describe()).rejects.toThrow(/not found/i);

      const r = await cli(['sessions', 'prune', '--older-than', '0s', '--json']);
      expect(r.code, describeResult(r)).toBe(0);
      expect(JSON.stringify(parseJson(r))).not.toContain(trial);
      expect(await storedRows(trial)).toBe(rows);
      expect((await h.client.workflow.getHandle(`${trial}/turn-1`).describe()).status.name).toBe('RUNNING');

      // Given where a session's id is expected, the trial's id says what it is and where its turn is.
      for (const args of [['end', trial, '--purge'], ['end', trial], ['status', trial]]) {
        const r = await cli(args);
        expect(r.code, describeResult(r)).toBe(1);
        expect(r.errLines).toEqual([`error: ${trial} is an eval trial, not a session`, `hint: its turn is ${trial}/turn-1 (see \`harness trace ${trial}/turn-1\`); list sessions with \`harness sessions\`; \`harness sessions prune\` purges eval trials once they are over`]);
      }
      expect((await h.client.workflow.getHandle(`${trial}/turn-1`).describe()).status.name).toBe('RUNNING');
    } finally {
      await h.client.workflow.getHandle(evalId).terminate('test over');
    }
  }, 180_000);
});
