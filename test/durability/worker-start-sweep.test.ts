/**
 * A worker starting on the home of one that runs an eval leaves the eval's trials alone. A trial
 * the eval runs itself has no workflow of its own (only its turn, `<trial>/turn-1`, whose parent
 * is the eval), and a starting `harness worker` used to take its sandbox for an ended session's:
 * it removed the container and exec records with the command in flight, and the model got
 * SANDBOX_UNAVAILABLE (after a kill, the retry ran the command again). Here a second worker
 * starts while a trial's command runs, under the default policy (the case approves it): the
 * container and the call's exec record survive it; then the first worker is killed, and the
 * second one's retry of the call follows the same command to its end: it runs once.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import Docker from 'dockerode';
import { afterAll, expect, inject, it } from 'vitest';
import type { EvalReport } from '../../deterministic/eval';
import { containerName, removeOrphans } from '../../activities/sandbox/containers';
import { execsDir } from '../../activities/sandbox/exec-record';
import { trialSessionId } from '../../workflows/eval/eval';
import { TEST_DATABASE_URL } from '../support/harness';
import { kill, ROOT, until } from '../support/processes';
import { cliEnv, describeResult, parseJson, runCli } from '../support/cli';

const docker = new Docker();
const workers: ChildProcess[] = [];
const dir = mkdtempSync(path.join(os.tmpdir(), 'harness-start-sweep-'));
const home = path.join(dir, 'home');

afterAll(async () => {
  for (const w of workers) await kill(w, 'SIGKILL');
  await removeOrphans(docker, [], { home }).catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

/** Starts `harness worker` and keeps all it says; resolves once it polls. */
async function worker(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'harness.js'), 'worker'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  workers.push(child);
  let output = '';
  for (const stream of [child.stdout!, child.stderr!]) stream.on('data', (d: Buffer) => (output += d.toString()));
  await until('the worker to poll', () => {
    if (child.exitCode !== null) throw new Error(`worker exited early (${child.exitCode}): ${output}`);
    return output.includes('worker ready');
  });
  return { child, output: () => output };
}

it('a worker started while an eval trial runs a command leaves its sandbox and exec record alone; the first killed, the command completes once', async () => {
  // A shared message store, so both workers run at once (the embedded one opens in one process).
  const env = cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_TASK_QUEUE: `start-sweep-${randomUUID()}`, HARNESS_HOME: home, DATABASE_URL: TEST_DATABASE_URL });

  const suite = path.join(dir, 'slow.jsonl');
  // Held until the test lets it go (a file it writes), however slowly the second worker starts.
  const command = 'echo started > started.txt; while [ ! -f go ]; do sleep 0.2; done; echo once >> count.txt';
  const kase = {
    id: 'slow',
    input: 'Append a line with the shell.',
    approvals: 'approve',
    model_script: {
      steps: [{ tool_calls: [{ name: 'run_shell', arguments: { command } }] }, { expect: { last_message_contains: '"exit_code":0' }, content: 'Appended.' }],
    },
    checks: [{ type: 'file_contains', path: 'count.txt', value: 'once' }],
  };
  writeFileSync(suite, JSON.stringify(kase));

  const first = await worker(env);
  const started = await runCli(['eval', suite, '--no-wait', '--json'], { env, timeoutMs: 60_000 });
  expect(started.code, describeResult(started)).toBe(0);
  const { eval_id } = parseJson<{ eval_id: string }>(started);
  const trial = trialSessionId(eval_id, 'slow', 1);
  const ws = path.join(home, 'workspaces', trial);
  await until('the trial\'s command to start', () => existsSync(path.join(ws, 'started.txt')), 120_000);
  const box = await docker.getContainer(containerName(trial)).inspect().catch((err: Error) => Promise.reject(new Error(`${err.message}\n${first.output()}`)));

  // A second worker on the same home starts (a standby, a restart): it sweeps before it polls.
  const second = await worker(env);
  expect(second.output()).toContain('worker ready');
  expect(second.output()).not.toMatch(/removed \d+ container/);
  const after = await docker.getContainer(containerName(trial)).inspect().catch((err: Error) => Promise.reject(new Error(`${err.message}\nfirst:\n${first.output()}\nsecond:\n${second.output()}`)));
  expect(after.Id).toBe(box.Id);
  expect(after.State.Running).toBe(true);
  expect(readdirSync(execsDir(home, trial)).some((f) => f.endsWith('.claim'))).toBe(true);
  // The first worker dies with the command running: the second one takes the call over.
  await kill(first.child, 'SIGKILL');
  writeFileSync(path.join(ws, 'go'), '');

  const r = await runCli(['eval', 'status', eval_id, '--json'], { env, timeoutMs: 180_000 });
  expect(r.code, describeResult(r)).toBe(0);
  const report = parseJson<EvalReport>(r);
  expect(report.totals).toMatchObject({ trials: 1, passed_trials: 1 });
  // The command ran to its end, once.
  expect(readFileSync(path.join(ws, 'count.txt'), 'utf8')).toBe('once\n');
}, 300_000);
