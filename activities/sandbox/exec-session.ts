/**
 * One long-lived shell per container that starts run_shell commands on request, instead of a
 * new Docker exec per command (a Docker exec costs 30-60 ms; a line on an open stream well
 * under one). The session only starts the very wrapper a Docker exec would run (exec-wrapper.ts),
 * with the same arguments and marker, so exit codes, timeouts, output caps, kills by marker
 * and the exec records that make a call run at most once are unchanged. It reports when each
 * wrapper ended; the outcome itself is always read from the record.
 *
 * The protocol is a line each way. To the session: `<id> <timeout-seconds> <command>`, the
 * command encoded without newlines (encodeCommand). From it: `start <id>` once the wrapper
 * is on its way and `done <id>` once it exited. A session that ends (its stream closed: the container stopped or was removed, the
 * process killed) resolves everything in flight, whose followers then probe the container as
 * they would after a lost Docker exec stream; the next command opens a new session.
 */
import { PassThrough, type Duplex } from 'node:stream';
import type Docker from 'dockerode';
import { WRAPPER, WRAPPER_SHELL } from './exec-wrapper';

/** A session ends after this long without a line; its worker sends an empty one every KEEPALIVE_MS. */
export const SESSION_IDLE_SEC = 15;
const KEEPALIVE_MS = 5_000;
/**
 * How long a sent command may go without its `start` line before the session is taken as dead.
 * A session killed while a command of it runs leaves its stream open (the running wrapper
 * holds it), so only a missing `start` tells that a line went nowhere.
 */
export const START_ACK_MS = 2_000;

/**
 * The in-container loop, run by bash (`$1` is the wrapper script). Only builtins run between
 * reading a line and starting its wrapper, and the wrapper is started straight in the
 * background with its own marker in its environment (HARNESS_WRAP=<id>, which the host's
 * "still running?" probe looks for), input and errors away from the session's stream; it
 * writes the `done` line itself; the session says `start <id>` once the wrapper is on its way.
 * A malformed line (the keep-alive is an empty one) is skipped.
 * Docker closes a session's input when its worker's connection closes; should a connection
 * hang instead, a session that hears nothing for SESSION_IDLE_SEC ends by itself.
 */
const SESSION_SCRIPT = `W=$1
while IFS= read -r -t ${SESSION_IDLE_SEC} line; do
  id=\${line%% *}; rest=\${line#* }; t=\${rest%% *}; c=\${rest#* }
  [[ $id =~ ^x?[0-9a-f]{32}$ && $t =~ ^[0-9]+[.][0-9]{3}$ ]] || continue
  printf -v c '%b' "$c"
  HARNESS_WRAP=$id ${WRAPPER_SHELL.join(' ')} "$W" harness-exec "$id" "$t" "$c" </dev/null 2>/dev/null &
  echo "start $id"
done
`;

/**
 * A command as one protocol field: every backslash doubled and each newline written `\\n`, so
 * the line holds no newline and bash's `printf %b` gives back exactly the command (with every
 * original backslash doubled, no other escape can appear).
 */
export function encodeCommand(cmd: string): string {
  return cmd.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** A command that cannot go through a session (argv cannot hold NUL; such a command takes the Docker exec path). */
export function sessionCanRun(cmd: string): boolean {
  return !cmd.includes('\0');
}

/** The open session of one container. */
export class ExecSession {
  private readonly waiting = new Map<string, () => void>();
  private readonly acks = new Map<string, (started: boolean) => void>();
  private open = true;
  private buffered = '';

  private readonly keepalive: NodeJS.Timeout;

  private constructor(private readonly stream: Duplex) {
    this.keepalive = setInterval(() => this.open && this.stream.write('\n'), KEEPALIVE_MS);
    this.keepalive.unref();
  }

  /** Starts the session shell in the container; throws what Docker threw. */
  static async start(container: Docker.Container, modem: { demuxStream(stream: NodeJS.ReadableStream, out: NodeJS.WritableStream, err: NodeJS.WritableStream): void }): Promise<ExecSession> {
    const exec = await container.exec({
      Cmd: ['/bin/bash', '--noprofile', '--norc', '-c', SESSION_SCRIPT, 'harness-session', WRAPPER],
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      WorkingDir: '/workspace',
    });
    const stream = await exec.start({ hijack: true, stdin: true });
    const session = new ExecSession(stream);
    const out = new PassThrough();
    // The session itself prints nothing on stderr; whatever comes is dropped, not buffered.
    const err = new PassThrough();
    err.resume();
    modem.demuxStream(stream, out, err);
    out.on('data', (chunk: Buffer) => session.read(chunk.toString('latin1')));
    for (const ev of ['end', 'close', 'error']) stream.once(ev, () => session.ended());
    // An idle session must not keep a worker that is shutting down alive.
    (stream as Duplex & { unref?: () => void }).unref?.();
    return session;
  }

  /** Whether the session still takes commands. */
  get alive(): boolean {
    return this.open;
  }

  /**
   * Asks the session to start the wrapper for record `id`. `started` resolves true on the
   * session's `start` line, false when the session ended or stayed silent for START_ACK_MS
   * (then it is closed: the wrapper may or may not be on its way). `ended` resolves once the
   * wrapper exited or the session ended (the record tells which). Undefined when the session
   * had already ended and nothing was sent.
   */
  run(id: string, timeoutSec: string, cmd: string): { started: Promise<boolean>; ended: Promise<void> } | undefined {
    if (!this.open) return undefined;
    const ended = new Promise<void>((resolve) => this.waiting.set(id, resolve));
    const started = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.acks.delete(id);
        resolve(false);
        this.close();
      }, START_ACK_MS);
      this.acks.set(id, (ok) => {
        clearTimeout(timer);
        resolve(ok);
      });
    });
    this.stream.write(`${id} ${timeoutSec} ${encodeCommand(cmd)}\n`);
    return { started, ended };
  }

  /** Ends the session (its running commands go on: they belong to their records). */
  close(): void {
    this.stream.destroy();
    this.ended();
  }

  private read(text: string): void {
    const lines = (this.buffered + text).split('\n');
    this.buffered = lines.pop() ?? '';
    for (const line of lines) {
      const m = /^(start|done) ([0-9a-z]+)$/.exec(line);
      if (!m) continue;
      const id = m[2]!;
      if (m[1] === 'start') {
        this.acks.get(id)?.(true);
        this.acks.delete(id);
      } else {
        this.waiting.get(id)?.();
        this.waiting.delete(id);
      }
    }
  }

  private ended(): void {
    this.open = false;
    clearInterval(this.keepalive);
    for (const ack of this.acks.values()) ack(false);
    this.acks.clear();
    for (const resolve of this.waiting.values()) resolve();
    this.waiting.clear();
  }
}
