/**
 * A throwaway harness for scripts (benchmarks, history recording): a headless dev server
 * with its data in a temp folder, an in-process worker, and a client; all gone afterwards.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime } from '@temporalio/worker';
import { createHarnessWorker } from '../workers/worker';
import { McpPool } from '../activities/mcp/pool';
import { WorkerDeclarations } from '../activities/declarations';
import { Database } from '../activities/memory/database';
import { embeddedFiles } from '../client/embedded';
import { spawnDevServer, waitForServer } from '../client/dev-server';
import { temporalSettings } from '../client/temporal-settings';
import { escapingLogger } from '../machine/terminal/temporal-log';
import { writeErrLine } from '../machine/terminal/write';
import { freePort } from './free-port';

/** What a scratch run gets. */
export interface Scratch {
  client: Client;
  taskQueue: string;
  home: string;
  address: string;
  /** The dev server's process (benchmarks read its CPU time). */
  serverPid: number | undefined;
  /** What the worker declares (the script is its owner): add MCP servers or endpoints its sessions name. */
  declarations: WorkerDeclarations;
}

/** Runs `fn` against a fresh dev server and worker, then tears both down. */
export async function withScratchHarness<T>(name: string, fn: (s: Scratch) => Promise<T>): Promise<T> {
  Runtime.install({ logger: escapingLogger('WARN') });
  const home = mkdtempSync(path.join(os.tmpdir(), `harness-${name}-`));
  const settings = temporalSettings({
    HARNESS_EMBEDDED_PORT: String(await freePort()),
    HARNESS_UI_PORT: String(await freePort()),
    HARNESS_HTTP_PORT: String(await freePort()),
  });
  const server = spawnDevServer(settings, home, { detached: false, logToFile: true });
  try {
    await waitForServer(settings, embeddedFiles(home).serverLog);
    const taskQueue = `${name}-${randomUUID()}`;
    const native = await NativeConnection.connect({ address: settings.address });
    const mcp = new McpPool({ env: {} });
    // DATABASE_URL (if set) is the one setting passed on: a benchmark may measure with Postgres.
    const env = process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {};
    // Opened before the worker polls, as `harness worker` opens it (workers/open-store.ts): the
    // embedded database's start (seconds of WASM) is then not inside a first workflow task.
    const memory = Database.fromEnv(home, env);
    await memory.open();
    const declarations = WorkerDeclarations.fromEnv(env);
    const worker = await createHarnessWorker({ connection: native, namespace: 'default', taskQueue, home, env, mcp, memory, declarations });
    const client = new Client({ connection: await Connection.connect({ address: settings.address }) });
    try {
      return await worker.runUntil(fn({ client, taskQueue, home, address: settings.address, serverPid: server.pid, declarations }));
    } finally {
      await mcp.closeAll();
      await native.close();
      await client.connection.close();
      await memory.close();
    }
  } finally {
    server.kill('SIGTERM');
  }
}

/** Runs a script's main and exits with its outcome (open gRPC channels would keep it alive). */
export function runScript(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err) => {
      writeErrLine(String((err as Error)?.stack ?? err));
      process.exit(1);
    },
  );
}
