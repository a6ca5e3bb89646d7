/**
 * The differential check: what the policy claimed about a command it allowed, against what the
 * command did when it ran. An allowed command must exec only programs the analysis found (bash
 * builtins never exec, so "observed ⊆ found" is the test), must not create, change or delete
 * any file, and must not even attempt a write-like system call on a real file (the read-only
 * root makes some fail, but the policy claimed the command does not write at all).
 */
import { decide, freezePolicy, type Decision } from '../../deterministic/policy/decide';
import { parsePolicy } from '../../deterministic/policy/schema';
import { SCRATCH_PREFIX } from '../../activities/sandbox/exec-wrapper';
import type { Change } from './snapshot';
import type { Exec, WriteCall } from './strace';
import type { TraceResult } from './tracer';

/** How a new session under the default policy decides a run_shell command (the frozen defaults). */
export function judgeAsNewSession(command: string): Decision {
  return decide(freezePolicy(parsePolicy(undefined)), { tool: 'run_shell', risk: 'dangerous', args: { command } });
}

/** Programs that exec another as their implementation (Debian's egrep is `exec grep -E`):
 * the second exec, by the same process, is not a program the command chose. */
const IMPLIED: Record<string, readonly string[]> = { egrep: ['grep'], fgrep: ['grep'] };

/** Paths a write reaches nothing through: bit buckets (gnulib reopens a closed stdin on
 * /dev/full), the terminal, the command's own output and inherited fds, pipes and sockets. The
 * capture folder holds the command's stdout/stderr. */
const SINK = /^(\/dev\/(null|full|zero|tty|stdin|stdout|stderr|fd\/\d+)|\/proc\/(self|thread-self|\d+)\/fd\/\d+|(pipe|socket):\[\d+\]|anon_inode:.*|\/run\/trace-cap\/(out|err))$/;

export interface Disagreement {
  command: string;
  decision: Decision;
  /** Exec'd programs the policy did not list. */
  unseen: Exec[];
  /** Write-like calls on real files, successful or not. */
  writes: WriteCall[];
  changes: Change[];
  /** The command took the tracer's driver down. */
  lost: boolean;
  /** Trace lines the parser could not read: the tracer may have missed something. */
  unparsed: string[];
}

/** The disagreement for an allowed command, or undefined when what it did matches the claim. */
export function compare(decision: Decision, result: TraceResult): Disagreement | undefined {
  if (decision.decision !== 'allow') return undefined;
  const seen = new Set(decision.programs ?? []);
  const image = new Map<number, string>();
  const unseen: Exec[] = [];
  for (const e of result.execs) {
    const name = basename(e.path);
    const implied = IMPLIED[image.get(e.pid) ?? '']?.includes(name) ?? false;
    if (!seen.has(name) && !implied) unseen.push(e);
    if (e.ok) image.set(e.pid, name);
  }
  const writes = result.writes.filter((w) => !w.paths.every((p) => SINK.test(p) || inScratch(p)));
  const lost = result.lost === true;
  const { changes } = result;
  if (!unseen.length && !writes.length && !changes.length && !lost && !result.unparsed.length) return undefined;
  return { command: result.command, decision, unseen, writes, changes, lost, unparsed: result.unparsed };
}

/**
 * The command's own scratch folder (its TMPDIR): programs keep temporary files there (sort
 * spilling a long input, tac copying a pipe, bash's large here-documents) and the sandbox's
 * wrapper removes it when the command ends, killed or not. Nothing written there outlives the
 * command, so it is not a change to any file; a temporary file put anywhere else still is.
 */
function inScratch(p: string): boolean {
  return p.startsWith(SCRATCH_PREFIX);
}

function basename(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

/** A short key naming what kind of thing the policy missed, to group disagreements. */
export function signature(d: Disagreement): string {
  const parts = new Set<string>();
  for (const e of d.unseen) parts.add(`runs ${basename(e.path)}`);
  for (const w of d.writes) parts.add(`${w.syscall}${w.ok ? '' : ' (failed)'}`);
  for (const c of d.changes) parts.add(c.kind);
  if (d.lost) parts.add('lost the tracer');
  if (d.unparsed.length) parts.add('unparsed trace');
  return [...parts].sort().join(', ');
}

/** A disagreement as text: the command JSON-escaped, the policy's claim, what was observed. */
export function formatDisagreement(d: Disagreement): string {
  const lines = [
    `command:  ${JSON.stringify(d.command)}`,
    `policy:   ${d.decision.decision} by ${d.decision.rule ?? '?'}; programs ${JSON.stringify(d.decision.programs ?? [])}`,
  ];
  for (const e of d.unseen) lines.push(`ran:      ${e.path} ${JSON.stringify(e.argv)}${e.ok ? '' : ` = ${e.result}`}`);
  for (const w of d.writes) lines.push(`syscall:  ${w.syscall}(${w.paths.map((p) => JSON.stringify(p)).join(', ')}) = ${w.result}`);
  for (const c of d.changes) lines.push(`file:     ${c.kind} ${JSON.stringify(c.path)}${c.what ? ` (${c.what})` : ''}`);
  if (d.lost) lines.push('tracer:   the command took the driver down');
  for (const u of d.unparsed.slice(0, 3)) lines.push(`unparsed: ${u.slice(0, 200)}`);
  return lines.join('\n');
}
