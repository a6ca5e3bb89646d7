/**
 * The processes behind one run_shell command inside the container: the bash wrapper that
 * runs it and records its status, and small helpers to run probe scripts and wait on streams.
 */
import Docker from 'dockerode';
import { EXEC_MOUNT } from './containers';

/**
 * How every run_shell command runs: exactly the shell and options the policy models
 * (deterministic/policy/shell.ts parses bash), never a second grammar such as dash's `/bin/sh`. No
 * profile or rc file, and the variables through which bash reads code or options from the
 * environment are unset by the wrapper before it starts (the container's environment is fixed,
 * but an exec must not depend on that).
 */
const COMMAND_SHELL = ['/bin/bash', '--noprofile', '--norc', '-c'] as const;

/** Variables unset before the command's shell starts: code (BASH_ENV, ENV), options (SHELLOPTS,
 * BASHOPTS, POSIXLY_CORRECT), and what changes how words are read (IFS, CDPATH, GLOBIGNORE). */
const SHELL_ENV_UNSET = ['BASH_ENV', 'ENV', 'SHELLOPTS', 'BASHOPTS', 'POSIXLY_CORRECT', 'IFS', 'CDPATH', 'GLOBIGNORE'] as const;

/**
 * Set for every command: git's read-only commands (`git status` refreshes the index otherwise)
 * write nothing, as the policy's `readOnly` assumes.
 */
export const SHELL_ENV_SET = ['GIT_OPTIONAL_LOCKS=0'] as const;

/**
 * Each command's own scratch folder (its TMPDIR), removed by the wrapper when the command ends,
 * killed or not: what programs keep there (sort spilling a long input, tac copying a pipe,
 * bash's large here-documents) never outlives the command, so a read-only command leaves no file.
 */
export const SCRATCH_PREFIX = '/tmp/.harness-exec-';

/**
 * The shell that runs the wrapper: bash too, in privileged mode (-p) so that nothing in its
 * environment (BASH_ENV, exported functions, SHELLOPTS) runs or changes it, whatever image or
 * exec it finds itself in.
 */
export const WRAPPER_SHELL = ['/bin/bash', '--noprofile', '--norc', '-p', '-c'] as const;

/**
 * Bash's loadable `mkdir` and `rm` (Debian's bash-builtins, in the sandbox image): the wrapper
 * makes and removes the command's scratch folder without a process of its own. Without them
 * (an image of one's own) the same words run /bin/mkdir and /bin/rm.
 */
const LOADABLES = '/usr/lib/bash';

/** Read-only in bash, so the wrapper cannot unset them: it stops exporting them instead (-p kept it from taking their values). */
const BASH_READONLY = new Set(['SHELLOPTS', 'BASHOPTS']);

/**
 * The in-container wrapper: `$1` record id, `$2` timeout in seconds, `$3` the command (a
 * positional argument, never spliced into the script). The wrapper itself carries
 * HARNESS_WRAP=<id>; the command and everything it starts carry HARNESS_EXEC=<id>, so the
 * host can kill the command by marker while the wrapper survives to record the status.
 * Processes the command leaves behind are killed when it ends: their output files are read
 * and removed right after, and nothing would watch the disk they kept writing to.
 *
 * Each process started here costs a millisecond or more of a warm command, so `timeout` and
 * the command's bash are the only ones: the scratch folder is made and removed by loadable
 * builtins, and the processes left behind are found by reading every process's environment
 * with bash's own mapfile. The kill loop kills only what it finds, and scans again after a
 * pause (the loadable sleep) until a scan finds none: a process sent SIGKILL dies only once it is
 * next scheduled, which on a loaded machine came after the command's result (a background job
 * still forking was seen alive by the next command). Forty rounds at most; a command that left
 * nothing behind pays one scan. The status is one small write the host reads only when it ends
 * in a newline (it is whole then), not a write and a rename. Last, `done <id>` on stdout tells a shell session
 * (exec-session.ts) that this command ended; on a Docker exec's stream nobody reads it.
 */
export const WRAPPER = `d=${EXEC_MOUNT}/$1
t=${SCRATCH_PREFIX}$1
unset HARNESS_WRAP TMPDIR ${SHELL_ENV_UNSET.filter((v) => !BASH_READONLY.has(v)).join(' ')}
export -n ${[...BASH_READONLY].join(' ')}
enable -f ${LOADABLES}/mkdir mkdir 2>/dev/null
enable -f ${LOADABLES}/rm rm 2>/dev/null
enable -f ${LOADABLES}/sleep sleep 2>/dev/null
HARNESS_EXEC=$1
export HARNESS_EXEC ${SHELL_ENV_SET.join(' ')}
mkdir -p "$t" && TMPDIR=$t && export TMPDIR
timeout -s KILL "$2" ${COMMAND_SHELL.join(' ')} "$3" </dev/null >"$d/out" 2>"$d/err"
s=$?
unset HARNESS_EXEC
n=0
while [ $n -lt 40 ]; do
  k=0
  for p in /proc/[0-9]*; do
    p=\${p#/proc/}
    case $p in 1|$$) continue ;; esac
    mapfile -d '' -t e 2>/dev/null <"/proc/$p/environ" || continue
    for v in "\${e[@]}"; do
      [ "$v" = "HARNESS_EXEC=$1" ] && { kill -9 "$p" 2>/dev/null; k=1; break; }
    done
  done
  [ $k = 0 ] && break
  sleep 0.005
  n=$((n + 1))
done
rm -rf "$t"
printf '%s\\n' "$s" >"$d/status"
echo "done $1"
`;

/** Runs a short helper script in the container and returns what it printed (bounded wait). */
export async function runProbe(container: Docker.Container, script: string): Promise<string> {
  const exec = await container.exec({ Cmd: ['/bin/sh', '-c', script], AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({ hijack: true, stdin: false });
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  await waitUpTo(endOf(stream), 5_000);
  stream.destroy();
  return Buffer.concat(chunks).toString('latin1');
}

/** Resolves when the stream ends, closes or fails. */
export function endOf(stream: NodeJS.EventEmitter): Promise<void> {
  return new Promise((resolve) => {
    for (const ev of ['end', 'close', 'error']) stream.once(ev, () => resolve());
  });
}

/** Waits for `p` (when given) but at most `ms`; never rejects. */
export async function waitUpTo(p: Promise<unknown> | undefined, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const delay = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, Math.min(ms, 2 ** 31 - 1)))));
  await Promise.race(p ? [p.catch(() => undefined), delay] : [delay]);
  clearTimeout(timer);
}
