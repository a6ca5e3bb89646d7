/** Finds the `temporal` CLI: TEMPORAL_CLI_PATH, then the project venv, then PATH. */
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { UserError } from '../machine/errors';
import { projectRoot } from '../machine/paths';

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Absolute path of the temporal binary, or a one-line error with the fix. */
export function findTemporalCli(env: NodeJS.ProcessEnv = process.env, root = projectRoot()): string {
  if (env.TEMPORAL_CLI_PATH) {
    if (executable(env.TEMPORAL_CLI_PATH)) return env.TEMPORAL_CLI_PATH;
    throw new UserError(`TEMPORAL_CLI_PATH=${env.TEMPORAL_CLI_PATH} is not an executable file`, 'point it at the `temporal` binary or unset it');
  }
  const venv = path.join(root, '.venv', 'bin', 'temporal');
  if (executable(venv)) return venv;
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'temporal');
    if (dir && executable(candidate)) return candidate;
  }
  throw new UserError('the Temporal CLI (`temporal`) was not found', 'run `npm run setup` (installs it into .venv) or set TEMPORAL_CLI_PATH');
}
