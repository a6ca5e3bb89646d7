/**
 * The tracer's container: the real sandbox's spec (containerSpec, so a restriction added there
 * applies here too) on the trace image, with the tracer's own mounts and environment.
 */
import type Docker from 'dockerode';
import { containerSpec, DEFAULT_LIMITS, SANDBOX_ENV as CONTAINER_ENV } from '../../activities/sandbox/containers';
import { SCRATCH_PREFIX, SHELL_ENV_SET } from '../../activities/sandbox/exec-wrapper';

/** The sandbox image plus strace (sandbox/build-trace-image.sh, run by `npm run setup`). */
export const TRACE_IMAGE = process.env.HARNESS_TRACE_IMAGE ?? 'harness-sandbox-trace:latest';

/**
 * The whole environment of a command in the sandbox: the container's (SANDBOX_ENV) plus what
 * the exec wrapper sets (SHELL_ENV_SET); the wrapper unsets the rest (SHELL_ENV_UNSET).
 */
export const SANDBOX_ENV: readonly string[] = [...CONTAINER_ENV, ...SHELL_ENV_SET];

/** The commands' scratch folder (their TMPDIR), as the sandbox's wrapper gives each command one. */
export const TRACE_SCRATCH = `${SCRATCH_PREFIX}trace`;

/** In the environment of the container's own processes (keep-alive, driver), never of a
 * command's: the driver kills every process without it once a command ends. */
export const KEEP_MARKER = 'HARNESS_TRACE_KEEP=1';

/** Label of tracer containers; the value is `<host>:<pid>` of the process that owns one. */
export const OWNER_LABEL = 'harness.policy-trace.owner';

/** Where the driver finds its input (read-only), leaves results, and captures output. */
export const MOUNTS = { input: '/run/trace-in', output: '/run/trace-out', capture: '/run/trace-cap' } as const;

/** The sandbox's restrictions (no network, read-only root, tmpfs /tmp, no capabilities at all —
 * strace needs none to trace its own children —, no-new-privileges, limits, init) plus the
 * tracer's mounts, all outside /workspace and /tmp. */
export function traceContainerSpec(o: {
  name: string;
  user: string;
  owner: string;
  workspace: string;
  input: string;
  output: string;
}): Docker.ContainerCreateOptions {
  const base = containerSpec({
    name: o.name,
    image: TRACE_IMAGE,
    user: o.user,
    sessionId: o.name,
    home: o.input,
    workspace: o.workspace,
    limits: DEFAULT_LIMITS,
  });
  const host = base.HostConfig ?? {};
  return {
    ...base,
    Env: [...SANDBOX_ENV, KEEP_MARKER],
    // Not the harness's labels: a worker's orphan removal must leave tracer containers alone.
    Labels: { [OWNER_LABEL]: o.owner },
    HostConfig: {
      ...host,
      Mounts: [
        ...(host.Mounts ?? []),
        { Type: 'bind', Source: o.input, Target: MOUNTS.input, ReadOnly: true },
        { Type: 'bind', Source: o.output, Target: MOUNTS.output, ReadOnly: false },
      ],
      Tmpfs: { ...host.Tmpfs, [MOUNTS.capture]: 'rw,nosuid,nodev,noexec,size=8m,mode=1777' },
    },
  };
}
