/**
 * Many `harness run` at once on a machine where nothing runs: exactly one of them starts the
 * embedded server and the background worker, the others wait for it and reuse it, and
 * `harness dev --stop` finds what was started. With TEMPORAL_ADDRESS set, a server that is
 * slow to answer is waited for rather than reported unreachable at the first try.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../scripts/free-port';
import { cliEnv, describeResult, parseJson, readPid, removeTempDirs, runCli, spawnCli, stackLines, tempDir, waitGone, writeScript } from '../support/cli';
import { isolatedEmbeddedEnv, killDeployment, serverPids, workerPids } from '../support/embedded-procs';

const RUNS = 20;

describe(`${RUNS} \`harness run\` started at once with nothing running`, () => {
  const scratch = tempDir('harness-concurrent-');
  const home = path.join(scratch, 'home');
  const db = path.join(home, 'temporal.db');
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    env = await isolatedEmbeddedEnv(home);
  });

  afterAll(async () => {
    await runCli(['dev', '--stop'], { env, cwd: scratch, timeoutMs: 60_000 }).catch(() => undefined);
    await killDeployment(home);
    removeTempDirs();
  }, 120_000);

  it('all answer, one embedded server and one worker serve them, and `harness dev --stop` stops both', async () => {
    const script = writeScript(scratch, { steps: [{ content: 'Concurrent run done. HARNESS_OK' }] }, 'one-step.json');
    // Two cores for twenty node processes, a server and a worker: minutes, not seconds.
    const results = await Promise.all(
      Array.from({ length: RUNS }, (_, i) =>
        runCli(['run', '--model', `scripted:${script}`, `Say that run ${i} is done`, '--json'], { env, cwd: scratch, timeoutMs: 360_000 }),
      ),
    );
    for (const r of results) {
      expect(r.code, describeResult(r)).toBe(0);
      expect(parseJson(r).answer, describeResult(r)).toBe('Concurrent run done. HARNESS_OK');
      expect(stackLines(r.stderr), describeResult(r)).toEqual([]);
    }
    expect(results.filter((r) => /starting the embedded temporal dev server/i.test(r.stderr))).toHaveLength(1);

    const servers = serverPids(db);
    expect(servers).toHaveLength(1);
    expect(readPid(path.join(home, 'server.pid'))).toBe(servers[0]);
    const workers = workerPids(home);
    expect(workers).toHaveLength(1);
    expect(readPid(path.join(home, 'worker.pid'))).toBe(workers[0]);

    const stop = await runCli(['dev', '--stop'], { env, cwd: scratch, timeoutMs: 60_000 });
    expect(stop.code, describeResult(stop)).toBe(0);
    expect(stop.stderr).toContain(`pid ${servers[0]}`);
    expect(stop.stderr).toContain(`pid ${workers[0]}`);
    expect(await waitGone(servers[0]!), `server pid ${servers[0]} should be gone`).toBe(true);
    expect(await waitGone(workers[0]!), `worker pid ${workers[0]} should be gone`).toBe(true);
    expect(serverPids(db)).toEqual([]);
  }, 480_000);
});

describe('TEMPORAL_ADDRESS that does not answer yet', () => {
  let proxy: Server | undefined;
  const sockets = new Set<Socket>();

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
    removeTempDirs();
  });

  it('is tried again with a note on stderr until it answers, instead of failing at once', async () => {
    const port = await freePort();
    const [targetHost, targetPort] = inject('temporalAddress').split(':');
    const env = cliEnv({
      TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
      HARNESS_HOME: tempDir('harness-late-home-'),
      HARNESS_TASK_QUEUE: `late-server-unserved-${process.pid}`,
    });
    const child = spawnCli(['status', 'no-such-session-here'], { env });
    let stderr = '';
    let stdout = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    // The server "comes up" (a proxy to the suite's server starts listening) only once the
    // CLI has said it is waiting, so the first attempts surely find nothing there.
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      // `status` waits for Temporal like for the rest: `waiting: Temporal at … is unreachable …; retrying`.
      if (!proxy && /waiting(:| for) Temporal/i.test(stderr)) {
        proxy = createServer((socket) => {
          const upstream = createConnection(Number(targetPort), targetHost);
          for (const s of [socket, upstream]) {
            sockets.add(s);
            s.on('error', () => undefined);
            s.on('close', () => sockets.delete(s));
          }
          socket.pipe(upstream).pipe(socket);
        }).listen(port, '127.0.0.1');
      }
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
    clearTimeout(timer);
    const dump = `exit ${code}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`;
    expect(stderr, dump).toMatch(/waiting(:| for) Temporal at 127\.0\.0\.1:\d+/i);
    // It got through: the answer is about the session, not about reaching Temporal.
    expect(stderr, dump).not.toMatch(/cannot reach Temporal/i);
    expect(stderr, dump).toMatch(/^error: .*no-such-session-here/m);
    expect(code, dump).toBe(1);
  }, 90_000);
});
