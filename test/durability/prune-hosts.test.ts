/**
 * `harness sessions prune` with two sandbox hosts (two `harness worker` processes with
 * HARNESS_HOST_ID a and b, their own HARNESS_HOME, one shared Postgres): a session's workspace
 * lives on the host that prepared its first turn, so its purge must run there. Before, the purge
 * ran on whichever worker took it from the shared queue, and left the other host's files behind.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import type { ChildProcess } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { decideApprovals, endSession, sendMessage, sessionState } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { DEFAULT_POLICY, newSessionId, scriptedConfig, TEST_DATABASE_URL } from '../support/harness';
import { kill, spawnWorker } from '../support/processes';
import { cliEnv, describeResult, parseJson, runCli } from '../support/cli';

const taskQueue = `prune-hosts-${randomUUID()}`;
// The hosts' store in a throwaway schema: prune purges what the store holds and Temporal does
// not know, which in the shared test database includes other runs' sessions.
const schema = `prune_hosts_${randomBytes(6).toString('hex')}`;
const databaseUrl = `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema},public`)}`;
let admin: pg.Client;
let client: Client;
let root: string;
const homes = { a: '', b: '' };
const workers: ChildProcess[] = [];

const envFor = (host: 'a' | 'b') => cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_TASK_QUEUE: taskQueue, HARNESS_HOME: homes[host], HARNESS_HOST_ID: host, DATABASE_URL: databaseUrl });

beforeAll(async () => {
  admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  // In public, not in the throwaway schema: dropping that schema must not drop the extension.
  await admin.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
  await admin.query(`CREATE SCHEMA ${schema}`);
  client = new Client({ connection: await Connection.connect({ address: inject('temporalAddress') }) });
  root = mkdtempSync(path.join(os.tmpdir(), 'harness-prune-hosts-'));
  homes.a = path.join(root, 'host-a');
  homes.b = path.join(root, 'host-b');
  workers.push(await spawnWorker(envFor('a')), await spawnWorker(envFor('b')));
}, 60_000);
afterAll(async () => {
  for (const w of workers) await kill(w, 'SIGKILL');
  await client?.connection.close();
  rmSync(root, { recursive: true, force: true });
  await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin?.end();
});

const workspace = (host: string, sessionId: string) => path.join(homes[host as 'a' | 'b'], 'workspaces', sessionId);

it("purges each ended session's workspace on the host it lived on", async () => {
  // Six sessions, each pinned to whichever host prepared its first turn: with the purge left to
  // either worker, the chance that every one lands on its own host is 1 in 64.
  const sessions = Array.from({ length: 6 }, () => newSessionId('prune-host'));
  await Promise.all(
    sessions.map(async (sessionId) => {
      const config = scriptedConfig({ steps: [{ tool_calls: [{ name: 'write_file', arguments: { path: 'data.txt', content: `${sessionId}\n` } }] }, { content: 'written' }] }, {}, DEFAULT_POLICY);
      const { turnId } = await sendMessage(client, { taskQueue, sessionId, config, text: 'write data.txt' });
      let out = await waitForTurn(client, turnId, { pollMs: 100 });
      while (out.kind === 'waiting') {
        await decideApprovals(client, sessionId, { approve: true });
        out = await waitForTurn(client, turnId, { pollMs: 100 });
      }
      expect(out.kind === 'done' && out.result.terminated_by).toBe('final_answer');
    }),
  );
  const hostOf = new Map<string, string>();
  for (const sessionId of sessions) {
    const host = (await sessionState(client, sessionId)).host!;
    hostOf.set(sessionId, host);
    expect(existsSync(path.join(workspace(host, sessionId), 'data.txt')), `${sessionId} on host ${host}`).toBe(true);
    await endSession(client, sessionId);
    await client.workflow.getHandle(sessionId).result();
  }

  const r = await runCli(['sessions', 'prune', '--older-than', '0s', '--json'], { env: cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_TASK_QUEUE: taskQueue, HARNESS_HOME: path.join(root, 'client') }), timeoutMs: 120_000 });
  expect(r.code, describeResult(r)).toBe(0);
  const report = parseJson<{ sessions: { session_id: string; purged?: { removed: string[] } }[]; failed: number }>(r);
  expect(report.failed).toBe(0);
  for (const sessionId of sessions) {
    const host = hostOf.get(sessionId)!;
    expect(report.sessions.find((s) => s.session_id === sessionId)?.purged?.removed, sessionId).toContain(`workspaces/${sessionId}`);
    expect(existsSync(workspace(host, sessionId)), `${sessionId}'s workspace on host ${host}`).toBe(false);
  }
}, 240_000);
