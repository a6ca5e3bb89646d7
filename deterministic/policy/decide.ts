/**
 * The policy decision for one tool call: deny rules win, then session allow rules (`--always`),
 * then config allow rules (a shell command is allowed only when every program in it is), then
 * ask rules, then the mode. Pure and deterministic: it runs inside the turn workflow.
 *
 * Three semantics, chosen by the policy's `version`. Without one (sessions recorded before
 * versions), the legacy default rules, JavaScript patterns and the coverage of that time, so
 * recorded decisions replay unchanged. Version 2: RE2 patterns (linear time), the current
 * default rules, and allow rules that never cover a program whose command assigns variables
 * (or defines functions, or runs arithmetic) or whose words are only known at run time; the
 * read-only skills mount is readable; redirections to /dev/null-like sinks are not shown to rules.
 * Version 3, the exact analysis: as version 2, and nothing is allowed that the analysis does not
 * fully understand (a construct it does not model, a word it does not read, an option missing
 * from the program's table); `--always` grants exactly the command that was shown.
 */
import { DEFAULT_RULES } from './defaults';
import { LEGACY_RULES } from './legacy';
import {
  commandMatches,
  hasCommandConditions,
  LEGACY,
  outsideArgPaths,
  outsidePaths,
  shellCommand,
  SINKS,
  toolApplies,
  V2,
  V3,
  type PolicyCall,
  type Semantics,
} from './match';
import type { Policy, Rule, RuleDecision } from './schema';
import { analyzeCommand } from './shell';
import type { CommandAnalysis, SimpleCommand } from './types';

/** The outcome for one call, recorded in history with the call. */
export interface Decision {
  decision: RuleDecision;
  /** The deciding rule's id (or `rules[i]`, `mode ask`, ...). */
  rule?: string;
  reason: string;
  /** For shell commands: every program found, in order. */
  programs?: string[];
}

interface Labelled {
  rule: Rule;
  label: string;
}

/** A program no allow rule covers, and (version 2) why, when it is not just "no rule names it". */
interface Missing {
  name: string;
  why?: string;
}

function semantics(policy: Policy): Semantics {
  return policy.version === 3 ? V3 : policy.version === 2 ? V2 : LEGACY;
}

/** The rules a policy applies, in order: its own, then the defaults of its version unless turned off. */
export function effectiveRules(policy: Policy): readonly Rule[] {
  if (!policy.defaults) return policy.rules;
  return [...policy.rules, ...(policy.version === undefined ? LEGACY_RULES : DEFAULT_RULES)];
}

/**
 * The policy a session keeps for its whole life: version 3, its own rules followed by the current
 * default rules written out, `defaults: false`. A later release that changes the defaults does
 * not change what a session started today allows.
 */
export function freezePolicy(policy: Policy): Policy {
  if (policy.version !== undefined && !policy.defaults) return { ...policy, version: 3 };
  const rules = policy.defaults ? [...policy.rules, ...DEFAULT_RULES] : policy.rules;
  // A deep copy: plain JSON that travels in history, sharing nothing with the module's constants.
  return { version: 3, mode: policy.mode, rules: JSON.parse(JSON.stringify(rules)) as Rule[], defaults: false };
}

/**
 * The policy a turn judges with once it runs the exact analysis (the `policy-exact` patch):
 * version 3 semantics over the rules the session froze. An unversioned policy of a session
 * recorded before versions is frozen now; its own rules still come first.
 */
export function exactPolicy(policy: Policy): Policy {
  if (policy.version === 3) return policy;
  return policy.version === 2 ? { ...policy, version: 3 } : freezePolicy(policy);
}

/** Decides one call under the policy and the session's `--always` rules. */
export function decide(policy: Policy, call: PolicyCall, sessionRules: readonly Rule[] = []): Decision {
  const sem = semantics(policy);
  const config = effectiveRules(policy).map((rule, i) => ({ rule, label: rule.id ?? `rules[${i}]` }));
  const session = sessionRules.map((rule) => ({ rule, label: rule.id ?? `session rule for ${rule.tool}` }));
  const command = shellCommand(call);
  const found = command === undefined ? undefined : analyzeCommand(command);
  const analysis = found && sem.version >= 2 ? forRules(found) : found;
  const programs = analysis && [...new Set(analysis.commands.map((c) => c.program).filter(Boolean))];
  const done = (d: Decision): Decision => (programs ? { ...d, programs } : d);
  const of = (decision: RuleDecision, list: Labelled[]) => list.filter((r) => r.rule.decision === decision);

  for (const r of [...of('deny', config), ...of('deny', session)]) {
    const hit = matchAny(r.rule, call, analysis, sem);
    if (hit) return done({ decision: 'deny', rule: r.label, reason: denial(r, hit, call, sem) });
  }

  // An `--always` of version 3 granted exactly this command: what the person read is what runs.
  const exact = [...of('allow', session), ...of('allow', config)].find((r) => r.rule.when?.commandIs !== undefined && toolApplies(r.rule, call, sem));
  if (exact) return done({ decision: 'allow', rule: exact.label, reason: `exactly this command is allowed by rule ${exact.label}${why(exact)}` });

  if (!analysis || analysis.ok) {
    const allowed = coverage([...of('allow', session), ...of('allow', config)], call, analysis, sem);
    if (allowed.ok) return done({ decision: 'allow', rule: allowed.labels.join(', '), reason: allowed.reason });
    for (const r of of('ask', [...config, ...session])) {
      if (matchAny(r.rule, call, analysis, sem)) return done({ decision: 'ask', rule: r.label, reason: because(r) });
    }
    const subject = allowed.missing.length
      ? allowed.missing.map((m) => `\`${m.name}\`${m.why ? ` (${m.why})` : ''}`).join(', ')
      : `\`${call.tool}\``;
    return done(fallback(policy, subject));
  }

  // Unparsable: never allowed, since we cannot tell what would run; denials above still applied.
  for (const r of of('ask', [...config, ...session])) {
    if (matchAny(r.rule, call, analysis, sem)) return done({ decision: 'ask', rule: r.label, reason: because(r) });
  }
  const reason = `the command cannot be analysed: ${analysis.reason}`;
  return done(policy.mode === 'strict' ? { decision: 'deny', rule: 'mode strict', reason } : { decision: 'ask', rule: 'unparsable', reason });
}


/**
 * What rules see of the analysis (version 2 and later): no redirections to /dev/null-like sinks
 * (`2>/dev/null`, `>&2` as a path), and each distinct program once. Rules judge a program by its
 * fields alone and the first match wins, so repeats change no decision; `ls; ls; …` eight
 * thousand times is judged as one `ls`.
 */
function forRules(analysis: CommandAnalysis): CommandAnalysis {
  const seen = new Set<string>();
  const commands: SimpleCommand[] = [];
  for (const c of analysis.commands) {
    const command = c.redirects.some((t) => SINKS.test(t)) ? { ...c, redirects: c.redirects.filter((t) => !SINKS.test(t)) } : c;
    const key = JSON.stringify([command.program, command.program ? '' : command.text, command.args, command.redirects, command.reads,
      command.via, command.unknown, command.unclear, command.globs]);
    if (seen.has(key)) continue;
    seen.add(key);
    commands.push(command);
  }
  return { ...analysis, commands };
}

/** What a deny or ask rule matched: a program of the command, or the call as a whole. */
type Hit = { command: SimpleCommand } | { call: true };

/**
 * Path arguments outside the session workspace. An MCP tool's paths name places in its server's
 * world (a filesystem server's own roots, which it confines itself), not the workspace, so the
 * `outsideWorkspace` condition never holds for them; rules on their `args` still apply.
 */
function workspacePathsOutside(call: PolicyCall): string[] {
  return call.tool.startsWith('mcp__') ? [] : outsideArgPaths(call.args);
}

function matchAny(rule: Rule, call: PolicyCall, analysis: CommandAnalysis | undefined, sem: Semantics): Hit | undefined {
  if (!toolApplies(rule, call, sem)) return undefined;
  const when = rule.when ?? {};
  const perCommand = hasCommandConditions(when);
  if (!analysis) {
    if (perCommand) return undefined;
    if (when.outsideWorkspace !== undefined && workspacePathsOutside(call).length > 0 !== when.outsideWorkspace) return undefined;
    return { call: true };
  }
  if (!perCommand && when.outsideWorkspace === undefined) return { call: true };
  const command = analysis.commands.find((c) => commandMatches(when, c, false, sem));
  return command && { command };
}

function coverage(
  rules: Labelled[],
  call: PolicyCall,
  analysis: CommandAnalysis | undefined,
  sem: Semantics,
): { ok: true; labels: string[]; reason: string } | { ok: false; missing: Missing[] } {
  if (!analysis) {
    const r = rules.find((x) => matchAny(x.rule, call, undefined, sem));
    return r ? { ok: true, labels: [r.label], reason: `\`${call.tool}\` is allowed by rule ${r.label}${why(r)}` } : { ok: false, missing: [] };
  }
  const labels: string[] = [];
  const missing: Missing[] = [];
  // Version 2: an assignment (or function, or arithmetic) anywhere changes what every later
  // program does (`PATH=/workspace; ls`), so no allow rule covers any program of the command.
  // Version 3: nor does a construct the analysis does not model.
  const setting = sem.version >= 2 ? analysis.settings[0] : undefined;
  const unmodelled = sem.version === 3 ? analysis.unmodelled[0] : undefined;
  for (const command of analysis.commands) {
    const name = command.program || command.text;
    const unknown = sem.version >= 2 ? command.unknown?.[0] : undefined;
    const unclear = sem.version === 3 ? command.unclear?.[0] : undefined;
    if (setting !== undefined) missing.push({ name, why: `${setting}, which changes what programs do` });
    else if (unmodelled !== undefined) missing.push({ name, why: unmodelled });
    else if (unknown !== undefined) missing.push({ name, why: `${unknown} is only known at run time` });
    else if (unclear !== undefined) missing.push({ name, why: `${unclear} is not understood by the policy` });
    else {
      const r = rules.find((x) => covers(x.rule, call, command, sem));
      if (r) labels.push(r.label);
      else missing.push(sem.version >= 2 ? { name, ...inspected(command, sem) } : { name });
    }
  }
  // Version 3: a setting or a construct the analysis does not model asks even when there is no
  // program to name (`(( 1 )) > x` runs no program, yet writes x).
  const blocker = sem.version === 3 ? (setting ?? unmodelled) : undefined;
  if (blocker !== undefined && !analysis.commands.length) missing.push({ name: call.tool, why: blocker });
  if (missing.length) return { ok: false, missing: unique(missing) };
  const distinct = [...new Set(labels)];
  if (!distinct.length) return { ok: true, labels: ['nothing-to-run'], reason: 'the command runs no program' };
  return { ok: true, labels: distinct, reason: `every program is allowed (${distinct.join(', ')})` };
}

/** Why a program the read-only rules know is not covered: its writing option, when it has one. */
function inspected(command: SimpleCommand, sem: Semantics): { why?: string } {
  if (!sem.programs.knows(command.program)) return {};
  const problem = sem.programs.notReadOnly(command.program, command.args, command.globs);
  return problem ? { why: problem } : {};
}

function unique(missing: Missing[]): Missing[] {
  const seen = new Set<string>();
  return missing.filter((m) => {
    const key = `${m.name}\n${m.why ?? ''}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function covers(rule: Rule, call: PolicyCall, command: SimpleCommand, sem: Semantics): boolean {
  if (!toolApplies(rule, call, sem)) return false;
  const when = rule.when ?? {};
  const perCommand = hasCommandConditions(when);
  if (!perCommand && when.outsideWorkspace === undefined) return true;
  return commandMatches(when, command, perCommand, sem);
}

function denial(r: Labelled, hit: Hit, call: PolicyCall, sem: Semantics): string {
  const tail = `denied by rule ${r.label}${why(r)}`;
  if ('call' in hit) {
    const outside = r.rule.when?.outsideWorkspace ? workspacePathsOutside(call) : [];
    return outside.length ? `\`${outside[0]}\` is outside the workspace: ${tail}` : `\`${call.tool}\` is ${tail}`;
  }
  const { command } = hit;
  const name = `\`${command.program || command.text}\`${command.via ? ` (run by ${command.via})` : ''}`;
  const when = r.rule.when ?? {};
  const target = when.redirect ? command.redirects.find((t) => sem.patterns.test(when.redirect as string, t)) : undefined;
  if (target !== undefined) return `${name} writes to \`${target}\`: ${tail}`;
  const outside = when.outsideWorkspace ? outsidePaths(command, sem) : [];
  if (outside.length) return `${name} reaches \`${outside[0]}\` outside the workspace: ${tail}`;
  return `${name} is ${tail}`;
}

function why(r: Labelled): string {
  return r.rule.reason ? ` (${r.rule.reason})` : '';
}

function because(r: Labelled): string {
  return `rule ${r.label} asks${why(r)}`;
}

function fallback(policy: Policy, subject: string): Decision {
  const rule = `mode ${policy.mode}`;
  if (policy.mode === 'auto') return { decision: 'allow', rule, reason: `no rule denies ${subject} (policy mode auto)` };
  if (policy.mode === 'strict') return { decision: 'deny', rule, reason: `no rule allows ${subject} (policy mode strict)` };
  return { decision: 'ask', rule, reason: `no rule allows ${subject}; policy mode ask asks a human` };
}
