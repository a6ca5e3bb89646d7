/**
 * Agents the way a CLI user gets them: a worker's config file declares them (`harness worker
 * --config`), and `harness run --agent NAME` starts a session as one of them, under the agent's
 * instructions and model, from a directory with no config of its own. An agent the worker lacks
 * is refused in one line naming the ones it has. Real processes: the built CLI, a worker on the
 * test's Temporal server.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { cliEnv, describeResult, parseJson, removeTempDirs, runCli, spawnCli, stackLines, tempDir } from '../support/cli';
import { TEST_DATABASE_URL } from '../support/harness';
import { until } from '../support/mcp-servers';
import { kill } from '../support/processes';

describe('`harness run --agent` against a worker whose config file declares agents', () => {
  const dir = tempDir('harness-agents-cli-');
  const elsewhere = tempDir('harness-agents-cwd-');
  let env: NodeJS.ProcessEnv;
  let worker: ChildProcess | undefined;
  let output = '';
  const cli = (args: string[]) => runCli(args, { env, cwd: elsewhere, timeoutMs: 120_000 });

  beforeAll(async () => {
    env = cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_TASK_QUEUE: `agents-cli-${randomUUID()}`, HARNESS_HOME: path.join(dir, 'home'), DATABASE_URL: TEST_DATABASE_URL });
    // The agent's model replays this script: it answers only under the agent's instructions.
    writeFileSync(path.join(dir, 'writer.json'), JSON.stringify({ steps: [{ expect: { system_contains: 'You are the writer agent.' }, content: 'Written by the agent. HARNESS_OK' }] }));
    writeFileSync(
      path.join(dir, 'worker.json'),
      JSON.stringify({
        agents: {
          writer: { instructions: 'You are the writer agent.', model: 'scripted:writer.json', policy: { mode: 'auto' }, limits: { maxSteps: 3 } },
          reviewer: { instructions: 'You are the reviewer agent.', model: 'gpt-4o-mini' },
        },
      }),
    );
    worker = spawnCli(['worker', '--config', 'worker.json'], { env, cwd: dir });
    for (const stream of [worker.stdout!, worker.stderr!]) stream.on('data', (d: Buffer) => (output += d.toString()));
    await until(() => /worker ready/.test(output), 90_000);
  });
  afterAll(async () => {
    if (worker) await kill(worker, 'SIGTERM');
    removeTempDirs();
  });

  it('the worker says which agents it declares as it starts', () => {
    expect(output).toMatch(/^declared: .*; agents writer,reviewer$/m);
  });

  it('runs a session as the named agent: its instructions and model, from a directory with no config', async () => {
    const r = await cli(['run', '--agent', 'writer', '--json', 'write something']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(parseJson(r)).toMatchObject({ answer: 'Written by the agent. HARNESS_OK', terminated_by: 'final_answer' });
  }, 120_000);

  it('refuses an agent the worker does not have, in one line naming the ones it has', async () => {
    const r = await cli(['run', '--agent', 'nobody', 'hello']);
    expect(r.code, describeResult(r)).toBe(1);
    expect(r.errLines.at(-2)).toMatch(/^error: session \S+ was refused: agent "nobody" is not one of this worker's agents \(it has writer, reviewer\)$/);
    expect(stackLines(r.stderr)).toEqual([]);
  }, 120_000);

  it('says what --agent does in --help', async () => {
    const r = await cli(['run', '--help']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout).toMatch(/--agent <name>\s+run a new session as this agent of the worker/);
  });
});
