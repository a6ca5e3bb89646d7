/**
 * The policy decision for one tool call: deny rules win, then session allow rules (`--always`),
 * then config allow rules (a shell command is allowed only when every program in it is), then
 * ask rules, then the mode. Pure and deterministic: it runs inside the turn workflow.
 *
 * Two semantics, chosen by the policy's `version`. Without one (sessions recorded before
 * versions), the legacy default rules, JavaScript patterns and the coverage of that time, so
 * recorded decisions replay unchanged. Version 2: RE2 patterns (linear time), the current
 * default rules, and allow rules that never cover a program whose command assigns variables
 * (or defines functions, or runs arithmetic) or whose words are only known at run time; the
 * read-only skills mount is readable; redirections to /dev/null-like sinks are not shown to rules.
 */
import { DEFAULT_RULES, SHELL_TOOL } from './defaults';
import { LEGACY_RULES } from './legacy';
import {
  commandMatches,
  escapeRegex,
  hasCommandConditions,
  LEGACY,
  outsideArgPaths,
  outsidePaths,
  SINKS,
  toolApplies,
  urlHost,
  V2,
  type PolicyCall,
  type Semantics,
} from './match';
import { hasInspector, notReadOnly } from './options';
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
  return policy.version === 2 ? V2 : LEGACY;
}

/** The rules a policy applies, in order: its own, then the defaults of its version unless turned off. */
export function effectiveRules(policy: Policy): readonly Rule[] {
  if (!policy.defaults) return policy.rules;
  return [...policy.rules, ...(policy.version === 2 ? DEFAULT_RULES : LEGACY_RULES)];
}

/**
 * The policy a session keeps for its whole life: version 2, its own rules followed by the current
 * default rules written out, `defaults: false`. A later release that changes the defaults does
 * not change what a session started today allows.
 */
export function freezePolicy(policy: Policy): Policy {
  const rules = policy.defaults ? [...policy.rules, ...DEFAULT_RULES] : policy.rules;
  // A deep copy: plain JSON that travels in history, sharing nothing with the module's constants.
  return { version: 2, mode: policy.mode, rules: JSON.parse(JSON.stringify(rules)) as Rule[], defaults: false };
}

/** Decides one call under the policy and the session's `--always` rules. */
export function decide(policy: Policy, call: PolicyCall, sessionRules: readonly Rule[] = []): Decision {
  const sem = semantics(policy);
  const config = effectiveRules(policy).map((rule, i) => ({ rule, label: rule.id ?? `rules[${i}]` }));
  const session = sessionRules.map((rule) => ({ rule, label: rule.id ?? `session rule for ${rule.tool}` }));
  const command = shellCommand(call);
  const found = command === undefined ? undefined : analyzeCommand(command);
  const analysis = found && sem.version === 2 ? withoutSinks(found) : found;
  const programs = analysis && [...new Set(analysis.commands.map((c) => c.program).filter(Boolean))];
  const done = (d: Decision): Decision => (programs ? { ...d, programs } : d);
  const of = (decision: RuleDecision, list: Labelled[]) => list.filter((r) => r.rule.decision === decision);

  for (const r of [...of('deny', config), ...of('deny', session)]) {
    const hit = matchAny(r.rule, call, analysis, sem);
    if (hit) return done({ decision: 'deny', rule: r.label, reason: denial(r, hit, call, sem) });
  }

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
 * The session-scoped allow rule an `--always` approval adds. Shell commands: the first program
 * with its first non-flag argument (`git commit -m x` → `git commit`). Calls with a `url`
 * (http_request): that host only. Other tools: the tool. Pass the session's policy: a policy
 * without a version gets the rules of that time (the whole tool for http_request), so recorded
 * sessions replay unchanged.
 */
export function alwaysRuleFor(call: PolicyCall, policy?: Policy): Rule {
  const base = { tool: call.tool, decision: 'allow' as const, reason: 'approved with --always for this session' };
  const command = shellCommand(call);
  if (command === undefined) {
    const legacy = policy !== undefined && policy.version !== 2;
    if (legacy || typeof call.args.url !== 'string') return { ...base, id: `always:${call.tool}` };
    const host = urlHost(call.args.url);
    // A URL the policy cannot read a plain host from: allow exactly that URL again.
    if (host === undefined) return { ...base, id: `always:${call.tool}:exact`, when: { args: { url: `^${escapeRegex(call.args.url)}$` } } };
    return { ...base, id: `always:${call.tool}:${host}`, when: { host: [host] } };
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

function shellCommand(call: PolicyCall): string | undefined {
  return call.tool === SHELL_TOOL && typeof call.args.command === 'string' ? call.args.command : undefined;
}

/** Version 2 does not show rules redirections that write no file (`2>/dev/null`, `>&2` as a path). */
function withoutSinks(analysis: CommandAnalysis): CommandAnalysis {
  const commands = analysis.commands.map((c) =>
    c.redirects.some((t) => SINKS.test(t)) ? { ...c, redirects: c.redirects.filter((t) => !SINKS.test(t)) } : c,
  );
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
  const setting = sem.version === 2 ? analysis.settings[0] : undefined;
  for (const command of analysis.commands) {
    const name = command.program || command.text;
    const unknown = sem.version === 2 ? command.unknown?.[0] : undefined;
    if (setting !== undefined) {
      missing.push({ name, why: `${setting}, which changes what programs do` });
      continue;
    }
    if (unknown !== undefined) {
      missing.push({ name, why: `${unknown} is only known at run time` });
      continue;
    }
    const r = rules.find((x) => covers(x.rule, call, command, sem));
    if (r) labels.push(r.label);
    else missing.push(sem.version === 2 ? { name, ...inspected(command) } : { name });
  }
  if (missing.length) return { ok: false, missing: unique(missing) };
  const distinct = [...new Set(labels)];
  if (!distinct.length) return { ok: true, labels: ['nothing-to-run'], reason: 'the command runs no program' };
  return { ok: true, labels: distinct, reason: `every program is allowed (${distinct.join(', ')})` };
}

/** Why a program the read-only rules know is not covered: its writing option, when it has one. */
function inspected(command: SimpleCommand): { why?: string } {
  if (!hasInspector(command.program)) return {};
  const problem = notReadOnly(command.program, command.args, command.globs);
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
