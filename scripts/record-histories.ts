/**
 * Records reference histories into test/histories/: a session exercising the turn loop
 * (tool calls, a tool error, malformed arguments, working memory, ask_user answered, finish)
 * run by the current code. CI replays every stored history against the code of the day,
 * so a workflow change that breaks running sessions fails the build (change logic behind
 * patched()). Usage: npm run build && node dist/scripts/record-histories.js <label>
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { createServer } from 'node:net';
import { DEFAULT_LIMITS, type SessionConfig } from '../common/session';
import { embeddedFiles, spawnDevServer, waitForServer } from '../lib/embedded';
import { answerQuestion, endSession, sendMessage, waitForTurn } from '../lib/session-client';
import { temporalSettings } from '../lib/temporal';
import { findTemporalCli } from '../lib/temporal-cli';
import { createHarnessWorker } from '../workers/worker';

const script = {
  steps: [
    { tool_calls: [{ name: 'list_files', arguments: {} }] },
    {
      tool_calls: [
        { name: 'write_file', arguments: { path: 'notes.md', content: '# Notes\n' } },
        { name: 'read_file', arguments: { path: 'missing.md' } },
      ],
    },
    { tool_calls: [{ name: 'read_file', arguments: '{"path": ' }] },
    { tool_calls: [{ name: 'remember', arguments: { key: 'project', value: 'durable harness' } }] },
    { content: 'Turn one done.' },
    { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }] },
    { expect: { last_message_contains: 'blue' }, tool_calls: [{ name: 'finish', arguments: { answer: 'Blue it is.' } }] },
  ],
};

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

async function main(): Promise<void> {
  const label = process.argv[2] ?? 'baseline';
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const home = mkdtempSync(path.join(os.tmpdir(), 'harness-record-'));
  const settings = temporalSettings({ HARNESS_EMBEDDED_PORT: String(await freePort()), HARNESS_UI_PORT: String(await freePort()) });
  const server = spawnDevServer(settings, home, { detached: false, headless: true });
  try {
    await waitForServer(settings, embeddedFiles(home).serverLog);
    const taskQueue = `record-${randomUUID()}`;
    const native = await NativeConnection.connect({ address: settings.address });
    const worker = await createHarnessWorker({ connection: native, namespace: 'default', taskQueue, home, env: {} });
    const client = new Client({ connection: await Connection.connect({ address: settings.address }) });
    const sessionId = `history-${label}`;
    const config: SessionConfig = { model: { provider: 'scripted', model: 'scripted', script }, systemPrompt: 'Reference session.', limits: DEFAULT_LIMITS };
    await worker.runUntil(async () => {
      const t1 = await sendMessage(client, { taskQueue, sessionId, config, text: 'Take notes.' });
      await waitForTurn(client, t1.turnId);
      const t2 = await sendMessage(client, { taskQueue, sessionId, text: 'Pick a colour.' });
      const waiting = await waitForTurn(client, t2.turnId);
      if (waiting.kind !== 'waiting') throw new Error('turn 2 should wait for an answer');
      await answerQuestion(client, sessionId, 'blue', 'recorder');
      await waitForTurn(client, t2.turnId);
      await endSession(client, sessionId);
      await client.workflow.getHandle(sessionId).result();
    });
    const dir = path.resolve(__dirname, '..', '..', 'test', 'histories', label);
    mkdirSync(dir, { recursive: true });
    for (const id of [sessionId, `${sessionId}/turn-1`, `${sessionId}/turn-2`]) {
      // The CLI writes the canonical history JSON that historyFromJSON (and the UI) read.
      const json = execFileSync(findTemporalCli(), ['workflow', 'show', '--workflow-id', id, '--address', settings.address, '--output', 'json'], {
        encoding: 'utf8',
      });
      const file = path.join(dir, `${id.replace('/', '.')}.json`);
      writeFileSync(file, json);
      console.error(`wrote ${file} (${JSON.parse(json).events.length} events)`);
    }
    await native.close();
    await client.connection.close();
  } finally {
    server.kill('SIGTERM');
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
