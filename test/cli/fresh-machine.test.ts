/**
 * `harness run` on a machine where no Temporal server runs: the first run starts the embedded
 * dev server and a background worker, later commands reuse them, `harness dev --stop` ends them.
 * Real processes only: the built CLI, a real `temporal server start-dev` on free ports, a real worker.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/free-port';
import {
  cliEnv,
  describeResult,
  parseJson,
  processAlive,
  readPid,
  removeTempDirs,
  ROOT,
  runCli,
  stackLines,
  tempDir,
  waitGone,
  writeScript,
  type CliResult,
} from '../support/cli';

const DEMO = path.join(ROOT, 'examples', 'demo.json');

describe('harness on a fresh machine (no server running, empty HARNESS_HOME)', () => {
  const scratch = tempDir('harness-fresh-');
  const home = path.join(scratch, 'home');
  const serverPidFile = path.join(home, 'server.pid');
  const workerPidFile = path.join(home, 'worker.pid');
  let env: NodeJS.ProcessEnv;
  let sessionId = '';
  /** Pids seen while the deployment ran, so afterAll can make sure none outlives the file. */
  const seenPids = new Set<number>();

  const cli = (args: string[], timeoutMs = 60_000) => runCli(args, { env, cwd: scratch, timeoutMs });
  const notePids = () => {
    for (const f of [serverPidFile, workerPidFile]) {
      const pid = readPid(f);
      if (pid) seenPids.add(pid);
    }
  };

  beforeAll(async () => {
    const port = await freePort();
    let uiPort = await freePort();
    while (uiPort === port) uiPort = await freePort();
    env = cliEnv({ HARNESS_HOME: home, HARNESS_EMBEDDED_PORT: String(port), HARNESS_UI_PORT: String(uiPort) });
  });

  afterAll(async () => {
    notePids();
    // Nothing may leak: stop through the CLI, then make sure by pid.
    await runCli(['dev', '--stop'], { env, cwd: scratch, timeoutMs: 30_000 }).catch(() => undefined);
    for (const pid of seenPids) {
      if (!(await waitGone(pid, 5_000))) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
    removeTempDirs();
  }, 60_000);

  it('runs the demo turn under the default policy, starting the embedded server and a background worker; approved, it prints one JSON document', async () => {
    // The README's command, without a terminal: the write waits for a person, and `run` exits 3 saying how to decide.
    const r = await cli(['run', '--model', `scripted:${DEMO}`, 'Write a poem to poem.txt and read it back', '--json'], 90_000);
    notePids();
    expect(r.code, describeResult(r)).toBe(3);
    const waiting = parseJson<{ session_id: string; status: string; pending: { calls: { tool: string; args: { path: string } }[] } }>(r);
    expect(waiting).toMatchObject({ status: 'waiting_for_approval', pending: { calls: [{ tool: 'write_file', args: { path: 'poem.txt' } }] } });
    expect(r.stderr).toContain(`harness approve ${waiting.session_id}`);
    expect(r.stderr).toMatch(/starting the embedded temporal dev server/i);
    expect(r.stderr).toMatch(/starting a background worker/i);
    expect(stackLines(r.stderr)).toEqual([]);

    const approved = await cli(['approve', waiting.session_id, '--json'], 90_000);
    expect(approved.code, describeResult(approved)).toBe(0);
    expect(approved.stderr).not.toMatch(/starting/i);
    const out = parseJson<Record<string, unknown>>(approved);
    expect(Object.keys(out).sort()).toEqual(['answer', 'session_id', 'steps', 'terminated_by', 'usage', 'workflow_id']);
    sessionId = String(out.session_id);
    expect(sessionId).not.toBe('');
    expect(out.workflow_id).toBe(`${sessionId}/turn-1`);
    expect(out.answer).toContain('HARNESS_OK');
    expect(out.terminated_by).toBe('final_answer');
    expect(out.steps).toBe(4);
    expect((out.usage as { total_tokens: number }).total_tokens).toBeGreaterThan(0);
    expect(stackLines(approved.stderr)).toEqual([]);

    const poem = path.join(home, 'workspaces', sessionId, 'poem.txt');
    expect(existsSync(poem), `${poem} should exist`).toBe(true);
    expect(readFileSync(poem, 'utf8')).toContain('history stayed');
    expect(readPid(serverPidFile)).toBeDefined();
    expect(readPid(workerPidFile)).toBeDefined();
  }, 120_000);

  let second: CliResult | undefined;

  it('reuses the running server and worker for a second run', async () => {
    expect(sessionId, 'the first run must have succeeded').not.toBe('');
    const pidsBefore = [readPid(serverPidFile), readPid(workerPidFile)];
    const script = writeScript(scratch, { steps: [{ content: 'Second run done. HARNESS_OK' }] }, 'one-step.json');
    second = await cli(['run', '--model', `scripted:${script}`, 'Say that the second run is done', '--json']);
    notePids();
    expect(second.stderr, describeResult(second)).not.toMatch(/starting/i);
    expect(stackLines(second.stderr)).toEqual([]);
    expect([readPid(serverPidFile), readPid(workerPidFile)]).toEqual(pidsBefore);
    expect(second.code, describeResult(second)).toBe(0);
    const out = parseJson<Record<string, unknown>>(second);
    expect(out.session_id).not.toBe(sessionId);
    expect(out.terminated_by).toBe('final_answer');
    expect(out.answer).toBe('Second run done. HARNESS_OK');
  }, 90_000);

  it('refuses a new --model for an existing session, which keeps the model it started with', async () => {
    const script = writeScript(scratch, { steps: [{ content: 'never used' }] }, 'other.json');
    const r = await cli(['run', '--session', sessionId, '--model', `scripted:${script}`, 'again', '--json']);
    expect(r.code, describeResult(r)).toBe(2);
    expect(r.stderr).toMatch(/^error: session .* keeps the model/m);
    expect(r.stderr).toMatch(/^hint: /m);
    expect(stackLines(r.stderr)).toEqual([]);
  }, 60_000);

  it('shows the first session in `status --json` and lists the session in `sessions --json`', async () => {
    expect(sessionId, 'the first run must have succeeded').not.toBe('');
    const status = await cli(['status', sessionId, '--json']);
    expect(status.code, describeResult(status)).toBe(0);
    const state = parseJson<{ session_id: string; turn_count: number; status: string }>(status);
    expect(state.session_id).toBe(sessionId);
    expect(state.turn_count).toBe(1);
    expect(status.stderr).not.toMatch(/starting/i);

    const sessions = await cli(['sessions', '--json']);
    expect(sessions.code, describeResult(sessions)).toBe(0);
    const rows = parseJson<{ session_id: string }[]>(sessions);
    expect(rows.map((row) => row.session_id)).toContain(sessionId);
  }, 60_000);

  it('stops the background server and worker with `harness dev --stop`', async () => {
    const serverPid = readPid(serverPidFile);
    const workerPid = readPid(workerPidFile);
    expect(serverPid, 'server.pid should name the embedded server').toBeDefined();
    expect(workerPid, 'worker.pid should name the background worker').toBeDefined();
    expect(processAlive(serverPid!)).toBe(true);
    expect(processAlive(workerPid!)).toBe(true);

    const r = await cli(['dev', '--stop'], 30_000);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stderr).toMatch(/stopped/i);
    expect(r.stderr).toContain(`pid ${serverPid}`);
    expect(r.stderr).toContain(`pid ${workerPid}`);
    expect(await waitGone(serverPid!), `server pid ${serverPid} should be gone`).toBe(true);
    expect(await waitGone(workerPid!), `worker pid ${workerPid} should be gone`).toBe(true);
  }, 60_000);
});
