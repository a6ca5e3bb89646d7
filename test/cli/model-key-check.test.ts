/**
 * `run` refuses a model the embedded worker has no key for before any session starts, with the
 * cure in its hint; what the worker has is what the process that started it recorded.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkWorkerModelKey } from '../../cli/model-key-check';
import { recordWorkerKeys, workerKeyEnv } from '../../client/worker-keys';
import { UserError } from '../../machine/errors';
import { until } from '../support/mcp-servers';

let home: string;
let worker: ChildProcess | undefined;
const gpt = { provider: 'openai', model: 'gpt-4o-mini' } as const;

beforeEach(() => {
  home = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'key-check-')));
});
afterEach(() => {
  worker?.kill('SIGKILL');
  worker = undefined;
  rmSync(home, { recursive: true, force: true });
});

/** A process that looks like this home's background worker (`node …/harness.js worker`). */
async function fakeWorker(): Promise<number> {
  const script = path.join(home, 'harness.js');
  writeFileSync(script, 'setInterval(() => {}, 1e9);\n');
  worker = spawn(process.execPath, [script, 'worker'], { env: { PATH: process.env.PATH, HARNESS_HOME: home }, stdio: 'ignore' });
  const pid = worker.pid!;
  writeFileSync(path.join(home, 'worker.pid'), `${pid}\n`);
  // The process must be running the script (not still the fork) for its command line to say so.
  await until(() => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('harness.js');
    } catch {
      return false;
    }
  });
  return pid;
}

const check = (env: NodeJS.ProcessEnv, model: Parameters<typeof checkWorkerModelKey>[0] = gpt) => () => checkWorkerModelKey(model, { embedded: true, home, env });

function thrown(f: () => void): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe('checkWorkerModelKey', () => {
  it('records key variables by name only, never their values', () => {
    recordWorkerKeys(home, 42, { OPENAI_API_KEY: 'sk-secret', OPENAI_BASE_URL: 'https://llm.example/v1', UNRELATED: 'x' });
    expect(readFileSync(path.join(home, 'worker.keys.json'), 'utf8')).not.toContain('sk-secret');
    expect(workerKeyEnv(home, 42)).toEqual({ OPENAI_API_KEY: 'set', OPENAI_BASE_URL: 'https://llm.example/v1' });
    expect(workerKeyEnv(home, 43)).toBeUndefined();
  });

  it('refuses an OpenAI model when the background worker has no key, telling how to restart it with one', async () => {
    const pid = await fakeWorker();
    recordWorkerKeys(home, pid, {});
    const err = thrown(check({}));
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).message).toBe(`OPENAI_API_KEY is not set on the background worker (pid ${pid}), so no session was started`);
    expect((err as UserError).hint).toMatch(/^set it where the worker runs: export it in this shell, then `harness dev --stop`/);
    // This shell has it but the worker was started before: only a restart helps.
    const restart = thrown(check({ OPENAI_API_KEY: 'sk-x' }));
    expect((restart as UserError).message).toMatch(/OPENAI_API_KEY is not set on the background worker/);
    expect((restart as UserError).hint).toMatch(/^the background worker was started without it: stop it with `harness dev --stop`/);
  });

  it('lets the session start when the worker has the key, the endpoint is local, the model is scripted, or nobody recorded the worker', async () => {
    const pid = await fakeWorker();
    recordWorkerKeys(home, pid, { OPENAI_API_KEY: 'sk-x' });
    expect(check({})).not.toThrow();
    recordWorkerKeys(home, pid, {});
    expect(check({}, { provider: 'openai', model: 'qwen', baseUrl: 'http://127.0.0.1:8080/v1' })).not.toThrow();
    expect(check({}, { provider: 'scripted', script: [] } as never)).not.toThrow();
    rmSync(path.join(home, 'worker.keys.json'));
    expect(check({})).not.toThrow();
    expect(() => checkWorkerModelKey(gpt, { embedded: false, home, env: {} })).not.toThrow();
  });
});
