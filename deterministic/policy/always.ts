/**
 * The session rule an `--always` approval adds, and how it is told to the person who gave it.
 * Version 3 grants exactly what was shown: the same command text (`commandIs`), or, when the
 * person typed a pattern, the program and leading words they typed (`commandPrefix`). Older
 * versions generalised a command to its program and first operand (`find .` from
 * `find . -name '*.tmp' -delete`, which then let `find . -delete` run): kept only for replay.
 */
import { shellCommand, urlHost, type PolicyCall } from './match';
import { escapeRegex } from './patterns';
import type { Policy, Rule } from './schema';
import { analyzeCommand } from './shell';

const REASON = 'approved with --always for this session';
// The words of a typed pattern: a program and literal arguments, nothing the shell would expand.
const PATTERN_WORD = /^[A-Za-z0-9_./:=@+,%-]+$/;
/** Longest pattern a person may type for `--always`. */
const MAX_ALWAYS_PATTERN = 200;

/**
 * The allow rule an `--always` approval of this call adds for the rest of the session. Pass the
 * session's policy: policies before version 3 get the rules of their time, so recorded sessions
 * replay unchanged. `pattern` (version 3, run_shell) is what the person typed instead.
 */
export function alwaysRuleFor(call: PolicyCall, policy?: Policy, pattern?: string): Rule {
  const base = { tool: call.tool, decision: 'allow' as const, reason: REASON };
  const command = shellCommand(call);
  if (command === undefined) {
    const legacy = policy !== undefined && policy.version === undefined;
    if (legacy || typeof call.args.url !== 'string') return { ...base, id: `always:${call.tool}` };
    const host = urlHost(call.args.url);
    // A URL the policy cannot read a plain host from: allow exactly that URL again.
    if (host === undefined) return { ...base, id: `always:${call.tool}:exact`, when: { args: { url: `^${escapeRegex(call.args.url)}$` } } };
    return { ...base, id: `always:${call.tool}:${host}`, when: { host: [host] } };
  }
  if (policy?.version === 3) {
    if (pattern !== undefined) return { ...base, id: `always:${call.tool}:${pattern}`, when: { commandPrefix: normalise(pattern) } };
    return { ...base, id: `always:${call.tool}:exact`, when: { commandIs: command } };
  }
  const analysis = analyzeCommand(command);
  const first = analysis.commands.find((c) => c.program);
  if (!analysis.ok || !first) {
    // Nothing to generalise from: allow exactly this command again.
    return { ...base, id: `always:${call.tool}:exact`, when: { args: { command: `^${escapeRegex(command)}$` } } };
  }
  const arg = first.args.find((a) => !a.startsWith('-'));
  const prefix = arg === undefined ? first.program : `${first.program} ${arg}`;
  return { ...base, id: `always:${call.tool}:${prefix}`, when: { commandPrefix: prefix } };
}

/**
 * Why a typed `--always` pattern cannot be granted for this call, or undefined when it can: it
 * must be a program and literal words (at most MAX_ALWAYS_PATTERN characters), for a shell
 * command, and match a program of that command (a pattern that grants nothing shown is a typo).
 */
export function alwaysPatternProblem(call: PolicyCall, pattern: string): string | undefined {
  const command = shellCommand(call);
  if (command === undefined) return `a pattern can only be given for run_shell commands, not for ${call.tool}`;
  if (pattern.length > MAX_ALWAYS_PATTERN) return `the pattern is longer than ${MAX_ALWAYS_PATTERN} characters`;
  const words = normalise(pattern).split(' ');
  const odd = words.find((w) => !PATTERN_WORD.test(w));
  if (odd !== undefined) return `the pattern word \`${odd.slice(0, 40)}\` is not a plain word (letters, digits and ._/:=@+,%- only)`;
  const programs = analyzeCommand(command).commands;
  if (!programs.some((c) => words.every((w, i) => [c.program, ...c.args][i] === w))) {
    return `the pattern \`${normalise(pattern)}\` matches no program of the command`;
  }
  return undefined;
}

/** What an `--always` rule grants, in one line for the person who approved. */
export function describeGrant(rule: Rule): string {
  const when = rule.when ?? {};
  if (when.commandIs !== undefined) return `${rule.tool} exactly \`${when.commandIs}\``;
  if (when.commandPrefix !== undefined) return `${rule.tool} commands starting \`${when.commandPrefix}\``;
  if (when.host) return `${rule.tool} to ${when.host.join(', ')}`;
  if (when.args) return `${rule.tool} with exactly these arguments`;
  return `every ${rule.tool} call`;
}

function normalise(pattern: string): string {
  return pattern.trim().split(/\s+/).join(' ');
}
