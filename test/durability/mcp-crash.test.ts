/**
 * A worker SIGKILLed while an MCP call waits on a server's question (elicitation): the call is
 * lost with the worker (the server's side effects cannot be made exactly-once), so the turn goes
 * on within seconds on a new worker with MCP_SERVER_UNAVAILABLE saying it may or may not have
 * taken effect, the stale question is no longer pending, and the server process the dead worker
 * left behind is stopped by the next worker.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { resolveSessionConfig } from '../../config/resolve';
import { answerQuestion, sendMessage, sessionState } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { newSessionId, TEST_DATABASE_URL } from '../support/harness';
import { kill, spawnWorker } from '../support/processes';
import { cliEnv, writeScript } from '../support/cli';
import { adoptHome } from '../../machine/home-mark';
import { alive, EVERYTHING, until } from '../support/mcp-servers';

let client: Client;
const workers: ChildProcess[] = [];
const serverPids: number[] = [];

beforeAll(async () => {
  client = new Client({ connection: await Connection.connect({ address: inject('temporalAddress') }) });
});
afterAll(async () => {
  for (const w of workers) await kill(w, 'SIGKILL');
  for (const pid of serverPids) if (alive(pid)) process.kill(pid, 'SIGKILL');
  await client?.connection.close();
});

it('a worker killed during a server question: the call ends as MCP_SERVER_UNAVAILABLE on a new worker, the question is dropped, the orphan server stopped', async () => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'harness-mcp-crash-'));
  adoptHome(home); // the test's own folder, where it also writes its config and script
  const pids = path.join(home, 'server-pids');
  const configFile = path.join(home, 'harness.config.json');
  const env = cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_TASK_QUEUE: `mcp-crash-${randomUUID()}`, HARNESS_HOME: home, DATABASE_URL: TEST_DATABASE_URL, HARNESS_CONFIG: configFile });
  writeFileSync(
    configFile,
    JSON.stringify({
      mcpServers: { everything: { command: '/bin/sh', args: ['-c', `echo $$ >> '${pids}'; exec '${process.execPath}' '${EVERYTHING}' stdio`], decision: 'allow' } },
    }),
  );
  const script = writeScript(home, {
    steps: [
      { tool_calls: [{ name: 'mcp__everything__trigger-elicitation-request', arguments: {} }] },
      { expect: { messages_contain: 'may or may not have taken effect' }, content: 'The call was lost; carrying on. HARNESS_OK' },
    ],
  });
  const config = resolveSessionConfig({ config: configFile, model: `scripted:${script}` }, {}, home);
  const sessionId = newSessionId('mcp-crash');

  workers.push(await spawnWorker(env));
  const { turnId } = await sendMessage(client, { taskQueue: env.HARNESS_TASK_QUEUE!, sessionId, config, text: 'ask me something' });
  await until(async () => (await sessionState(client, sessionId)).status === 'waiting_for_user', 60_000);
  const serverPid = Number(readFileSync(pids, 'utf8').trim().split('\n').pop());
  serverPids.push(serverPid);
  expect(alive(serverPid)).toBe(true);

  await kill(workers[0], 'SIGKILL');
  // The server outlives the killed worker (it does not exit when its stdin closes) ...
  expect(alive(serverPid)).toBe(true);
  workers.push(await spawnWorker(env));
  // ... until the next worker starts and stops it.
  await until(() => !alive(serverPid), 20_000);

  // The dead worker's question stays pending until the call's heartbeat timeout says the call is
  // lost; then it is dropped and the turn goes on.
  await until(async () => (await sessionState(client, sessionId)).status !== 'waiting_for_user', 30_000);
  const out = await waitForTurn(client, turnId, { pollMs: 200 });
  expect(out.kind).toBe('done');
  if (out.kind !== 'done') return;
  expect(out.result.answer).toContain('HARNESS_OK');
  expect(out.result.toolCalls[0]).toMatchObject({ name: 'mcp__everything__trigger-elicitation-request', ok: false, error_type: 'MCP_SERVER_UNAVAILABLE' });
  const state = await sessionState(client, sessionId);
  expect(state.status).toBe('idle');
  expect(state.pending).toBeUndefined();
  await expect(answerQuestion(client, sessionId, 'too late')).rejects.toThrow();
}, 180_000);
