/**
 * Starting one command's wrapper through a Docker exec of its own: the way every command ran
 * before shell sessions (exec-session.ts), and still the way for a command a session cannot
 * carry or when a session ended just as the command was sent.
 */
import type Docker from 'dockerode';
import { endOf, WRAPPER, WRAPPER_SHELL } from './exec-wrapper';

/** A started command: `ended` resolves when its wrapper exited or the channel that would tell closed; absent when unknown. */
export interface Launched {
  ended?: Promise<void>;
  close(): void;
}

/** Starts a created Docker exec; never throws (a failed start leaves the record to tell whether it ran). */
export async function startExec(exec: Docker.Exec | Promise<Docker.Exec>): Promise<Launched> {
  try {
    const stream = await (await exec).start({ hijack: true, stdin: false });
    // The wrapper prints nothing; reading keeps the stream flowing until it ends.
    stream.resume();
    return { ended: endOf(stream), close: () => stream.destroy() };
  } catch {
    return { close: () => undefined };
  }
}

/** A Docker exec (created, not started) of the wrapper for record `id`, marked HARNESS_WRAP=<id>. */
export function createWrapperExec(container: Docker.Container, id: string, cmd: string, timeoutSec: string): Promise<Docker.Exec> {
  return container.exec({
    Cmd: [...WRAPPER_SHELL, WRAPPER, 'harness-exec', id, timeoutSec, cmd],
    AttachStdout: true,
    AttachStderr: true,
    WorkingDir: '/workspace',
    Env: [`HARNESS_WRAP=${id}`],
  });
}
