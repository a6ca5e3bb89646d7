/**
 * The views that wait ride out a server outage as `run` and `status --follow` do: the Temporal
 * dev server is SIGKILLed while `trace --follow` follows a turn whose model call is in flight,
 * and another `trace --follow` and `sessions` are started during the outage, which lasts well
 * past the 15 s after which they used to give up connecting. Each says in one line that
 * Temporal is unreachable, and carries on once it is back: `sessions` lists the session, each
 * `trace --follow` prints the rest of the turn and ends with it. The test runs its own dev server (the shared one is not disturbed) on
 * a database file, so the restarted server has the session.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, expect, it } from 'vitest';
import { freePort } from '../../scripts/free-port';
import { temporalSettings } from '../../client/temporal-settings';
import { TEST_DATABASE_URL } from '../support/harness';
import { kill, spawnWorker } from '../support/processes';
import { startOwnServer } from '../support/embedded-procs';
import { cliEnv, removeTempDirs, tempDir, writeScript } from '../support/cli';
import { modelCallRunning, watchCli } from '../support/watched-cli';

/** Longer than the 15 s connection patience that `sessions` used to give up after. */
const OUTAGE_MS = 30_000;
const processes: ChildProcess[] = [];

afterAll(async () => {
  for (const p of processes.reverse()) await kill(p, 'SIGKILL');
  removeTempDirs();
}, 60_000);

it('`trace --follow` (attached before or started during it) and `sessions` wait through a server gone for 30 s and carry on when it is back', async () => {
  const dir = tempDir('harness-outage-views-');
  const home = path.join(dir, 'server');
  mkdirSync(home);
  const settings = temporalSettings({ HARNESS_EMBEDDED_PORT: String(await freePort()), HARNESS_UI_PORT: String(await freePort()) });
  // The same port and database file each time: the restarted server has the session.
  const startServer = () => startOwnServer(settings, home, (child) => processes.push(child));
  const server = await startServer();
  const env = cliEnv({ TEMPORAL_ADDRESS: settings.address, HARNESS_TASK_QUEUE: 'outage-views', HARNESS_HOME: path.join(dir, 'harness'), DATABASE_URL: TEST_DATABASE_URL });
  processes.push(await spawnWorker(env));
  const script = writeScript(dir, { steps: [{ tool_calls: [{ name: 'get_current_time', arguments: {} }] }, { fault: { delay_ms: 30_000 }, content: 'Back after the outage. HARNESS_OK' }] });
  const run = watchCli(['run', '--model', `scripted:${script}`, 'tell the time, slowly'], { env, cwd: dir });
  processes.push(run.child);
  const sessionId = await modelCallRunning(settings.address, () => run.out.stderr);
  const turnId = `${sessionId}/turn-1`;

  const trace = watchCli(['trace', turnId, '--follow'], { env, cwd: dir });
  processes.push(trace.child);
  await trace.until(/^following .*; Ctrl-C stops$/m, 60_000);

  await kill(server, 'SIGKILL');
  const gone = Date.now();
  const unreachable = /^waiting: Temporal at 127\.0\.0\.1:\d+ is unreachable \((connection refused|.+)\)(?: for \d+ (s|min))?; retrying$/m;
  const sessions = watchCli(['sessions'], { env, cwd: dir });
  processes.push(sessions.child);
  const late = watchCli(['trace', turnId, '--follow'], { env, cwd: dir });
  processes.push(late.child);
  await sessions.until(unreachable, 30_000);
  await late.until(unreachable, 30_000);
  await trace.until(unreachable, 60_000);

  await sleep(Math.max(0, OUTAGE_MS - (Date.now() - gone)));
  // All still wait (those started in the outage used to give up after 15 s: "cannot reach Temporal").
  for (const c of [sessions, late, trace]) expect(c.out.code, c.dump()).toBeUndefined();
  await startServer();

  await sessions.finished(120_000);
  expect(sessions.out.stdout, sessions.dump()).toMatch(new RegExp(`^${sessionId}\\t(running step 2|idle)\\t1 turn\\(s\\)\\t`, 'm'));
  expect(sessions.out.stderr, sessions.dump()).toMatch(/^… Temporal answers again$/m);

  // Each follow goes on with the turn: the model's reply and the turn's end, then it stops by itself.
  for (const c of [trace, late]) {
    await c.finished(180_000);
    expect(c.out.stderr, c.dump()).toMatch(/^… Temporal answers again$/m);
    expect(c.out.stderr, c.dump()).toMatch(new RegExp(`^${turnId.replace(/\//g, '\\/')} has closed$`, 'm'));
    expect(c.out.stdout, c.dump()).toMatch(/Back after the outage/);
  }
  // The late one printed the trace so far first: step 1's call, then the rest.
  expect(late.out.stdout, late.dump()).toMatch(/get_current_time/);
  await run.finished(120_000);
}, 420_000);
