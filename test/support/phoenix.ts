/**
 * Arize Phoenix for tests: started offline (no telemetry, no web fonts) from .venv on free
 * ports in a temp working dir, its spans read back by the REST API and anything else by GraphQL.
 * Missing Phoenix is a failure, not a skip (scripts/setup-phoenix.sh installs it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT, stopChild, tempDir } from './cli';
import { freePort } from '../../scripts/free-port';

const PHOENIX = path.join(ROOT, '.venv', 'bin', 'phoenix');

/** A running Phoenix: its base URL and process. */
export interface Phoenix {
  base: string;
  child: ChildProcess;
  output(): string;
}

/** A span as Phoenix's REST API gives it. */
export interface PhoenixSpan {
  name: string;
  context: { trace_id: string; span_id: string };
  parent_id: string | null;
  span_kind: string;
  status_code: string;
  attributes: Record<string, unknown>;
}

/** Starts Phoenix and waits until it answers. */
export async function startPhoenix(): Promise<Phoenix> {
  if (!existsSync(PHOENIX)) throw new Error(`Phoenix is not installed (${PHOENIX}): run scripts/setup-phoenix.sh (npm run setup does)`);
  const port = await freePort();
  let grpcPort = await freePort();
  while (grpcPort === port) grpcPort = await freePort();
  const child = spawn(PHOENIX, ['serve'], {
    env: {
      ...process.env,
      PHOENIX_WORKING_DIR: tempDir('harness-phoenix-'),
      PHOENIX_HOST: '127.0.0.1',
      PHOENIX_PORT: String(port),
      PHOENIX_GRPC_PORT: String(grpcPort),
      PHOENIX_TELEMETRY_ENABLED: 'false',
      PHOENIX_ALLOW_EXTERNAL_RESOURCES: 'false',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (d: Buffer) => (output = (output + d.toString()).slice(-4_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const base = `http://127.0.0.1:${port}`;
  const started = Date.now();
  while (Date.now() - started < 120_000) {
    if (child.exitCode !== null) throw new Error(`phoenix exited (${child.exitCode}):\n${output}`);
    if (await fetch(`${base}/healthz`).then((r) => r.ok, () => false)) return { base, child, output: () => output };
    await sleep(250);
  }
  await stopChild(child, 'SIGKILL');
  throw new Error(`phoenix did not answer on ${base} within 120 s:\n${output}`);
}

/** The spans of a trace in the default project once `count` have arrived (ingestion is asynchronous). */
export async function phoenixSpans(p: Phoenix, trace: string, count: number): Promise<PhoenixSpan[]> {
  let spans: PhoenixSpan[] = [];
  for (let i = 0; i < 120; i++) {
    const r = await fetch(`${p.base}/v1/projects/default/spans?trace_id=${trace}&limit=1000`);
    if (r.ok) spans = ((await r.json()) as { data: PhoenixSpan[] }).data;
    if (spans.length >= count) return spans;
    await sleep(250);
  }
  throw new Error(`Phoenix has ${spans.length} of ${count} spans of trace ${trace}`);
}

/** A GraphQL request to Phoenix; throws on errors. */
export async function phoenixGraphql<T>(p: Phoenix, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const r = await fetch(`${p.base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
  const body = (await r.json()) as { data?: T; errors?: { message: string }[] };
  if (!r.ok || body.errors?.length) throw new Error(`Phoenix GraphQL: ${r.status} ${JSON.stringify(body.errors ?? body)}`);
  return body.data!;
}
