/** Docker failures as the one error the sandbox reports: SANDBOX_UNAVAILABLE, with what to do. */

/** The image built by sandbox/build-rootfs.sh (or sandbox/Dockerfile). */
export const DEFAULT_SANDBOX_IMAGE = 'harness-sandbox:latest';
/** How to get the image, for messages. */
export const BUILD_HINT = 'build it with `harness sandbox build` (or `bash sandbox/build-rootfs.sh`)';

// Socket-level failures: the engine is down, the socket is missing or not ours to use.
const UNREACHABLE = ['ECONNREFUSED', 'ENOENT', 'EACCES', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND'];

/** Docker is down, the image is missing or the container cannot run: the tool reports SANDBOX_UNAVAILABLE. */
export class SandboxError extends Error {
  override name = 'SandboxError';
  readonly errorType = 'SANDBOX_UNAVAILABLE' as const;
  /** True when the command may already have started: retrying it could run it twice. */
  readonly started: boolean;

  constructor(message: string, opts: { started?: boolean } = {}) {
    super(message);
    this.started = opts.started ?? false;
  }
}

/** The HTTP status of a Docker API error, if it is one. */
export function statusOf(err: unknown): number | undefined {
  return (err as { statusCode?: number } | null)?.statusCode;
}

/** True when a container is gone: 404 removed, 409 stopped (e.g. its init was killed). */
export function isGone(err: unknown): boolean {
  return statusOf(err) === 404 || statusOf(err) === 409;
}

/** True for a paused container (also 409): its processes live on, frozen, so it is not gone. */
export function isPaused(err: unknown): boolean {
  const e = err as { message?: string; json?: { message?: string } } | null;
  return statusOf(err) === 409 && /paused/i.test(e?.json?.message ?? e?.message ?? '');
}

/** Maps any Docker failure to a SandboxError with a message that says what to do. */
export function toSandboxError(err: unknown, image: string = DEFAULT_SANDBOX_IMAGE): SandboxError {
  if (err instanceof SandboxError) return err;
  const e = err as { code?: string; statusCode?: number; message?: string; json?: { message?: string } } | null;
  const detail = e?.json?.message ?? e?.message ?? String(err);
  if (e?.code && UNREACHABLE.includes(e.code)) {
    return new SandboxError(`Docker Engine is not reachable (${detail}); start dockerd or run \`npm run setup\``);
  }
  if (e?.statusCode === 404 && /image/i.test(detail)) return new SandboxError(`sandbox image ${image} is missing: ${BUILD_HINT}`);
  return new SandboxError(`Docker error: ${detail.trim()}`);
}
