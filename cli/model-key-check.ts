/**
 * `run` checks that the worker can call the session's model before it starts the session: a
 * session started without a key fails at its first model call, and `retry` cannot cure that,
 * only a worker that has the key. Known only for the embedded deployment's worker (whose
 * environment the process that started it recorded, client/worker-keys.ts); another worker's
 * environment is its own, and its first model call says what it lacks.
 */
import { keyForEndpoint } from '../activities/model/keys';
import type { ModelSpec } from '../deterministic/session-config';
import { UserError } from '../machine/errors';
import { embeddedFiles } from '../machine/paths';
import { checkPidFile } from '../machine/pids';
import { workerKeyEnv } from '../client/worker-keys';

/** Throws a one-line error when the embedded worker has no key for `model`'s endpoint. */
export function checkWorkerModelKey(model: ModelSpec, opts: { embedded: boolean; home: string; env: NodeJS.ProcessEnv }): void {
  if (!opts.embedded || model.provider !== 'openai') return;
  const worker = checkPidFile(embeddedFiles(opts.home).workerPid, 'worker', opts.home);
  if (worker.state !== 'ours') return;
  const workerEnv = workerKeyEnv(opts.home, worker.pid);
  if (!workerEnv) return;
  const missing = modelKeyProblem(model, workerEnv);
  if (!missing) return;
  const here = modelKeyProblem(model, opts.env) === undefined;
  throw new UserError(
    `${missing.replace(/on the worker\b/, `on the background worker (pid ${worker.pid})`)}, so no session was started`,
    here
      ? 'the background worker was started without it: stop it with `harness dev --stop` and run again (the next run starts it with this shell\'s environment)'
      : 'set it where the worker runs: export it in this shell, then `harness dev --stop` and run again (the next run starts the background worker with it)',
  );
}

/** Why a worker with this environment could not call `model`, or undefined when it could. */
function modelKeyProblem(model: ModelSpec, env: Record<string, string | undefined>): string | undefined {
  if (model.provider !== 'openai') return undefined;
  const key = keyForEndpoint(model.baseUrl ?? env.OPENAI_BASE_URL, env);
  return 'problem' in key ? key.problem : undefined;
}
