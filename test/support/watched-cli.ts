/**
 * A `harness` process watched as it runs, for tests of commands that wait: its output as it
 * comes, a wait for a stderr line, and the check that it finished well.
 */
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { expect } from 'vitest';
import { spawnCli, stackLines, type CliOptions } from './cli';

/** A running CLI process and what it printed so far. */
export interface WatchedCli {
  child: ChildProcess;
  out: { stdout: string; stderr: string; code: number | null | undefined };
  /** Waits until stderr matches (fails after `ms`, or when the process ends first). */
  until(what: RegExp, ms: number): Promise<void>;
  /** Expects exit 0 within `ms`, no stack and no `error:` line. */
  finished(ms: number): Promise<void>;
  /** Exit code and both streams, for assertion messages. */
  dump(): string;
}

/** Starts `harness ...args` and watches it. */
export function watchCli(args: string[], opts: CliOptions): WatchedCli {
  const child = spawnCli(args, opts);
  const out: WatchedCli['out'] = { stdout: '', stderr: '', code: undefined };
  child.stdout!.on('data', (d: Buffer) => (out.stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out.stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve((out.code = code))));
  const dump = () => `exit ${String(out.code)}\n--- stdout\n${out.stdout}\n--- stderr\n${out.stderr}`;
  return {
    child,
    out,
    dump,
    async until(what, ms) {
      const deadline = Date.now() + ms;
      while (!what.test(out.stderr) && Date.now() < deadline && out.code === undefined) await sleep(100);
      expect(out.stderr, `stderr never matched ${what}:\n${dump()}`).toMatch(what);
    },
    async finished(ms) {
      const code = await Promise.race([exited, sleep(ms).then(() => 'still running')]);
      expect(code, dump()).toBe(0);
      expect(stackLines(out.stderr), dump()).toEqual([]);
      expect(out.stderr, dump()).not.toMatch(/unexpected error|^error:/m);
    },
  };
}

/** Resolves with the session id once the turn `run` named on its stderr has its model call running. */
export async function modelCallRunning(address: string, stderr: () => string, timeoutMs = 90_000): Promise<string> {
  const client = new Client({ connection: await Connection.connect({ address }) });
  try {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const sessionId = /^session (\S+) · /m.exec(stderr())?.[1];
      if (sessionId) {
        const d = await client.workflow.getHandle(`${sessionId}/turn-1`).describe().catch(() => undefined);
        if (d?.raw.pendingActivities?.some((a) => a.activityType?.name === 'callModel' && a.lastStartedTime)) return sessionId;
      }
      await sleep(200);
    }
    throw new Error(`the model call never started:\n${stderr()}`);
  } finally {
    await client.connection.close();
  }
}
