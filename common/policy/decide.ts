/**
 * The policy decision for one tool call: deny rules win, then session allow rules (`--always`),
 * then config allow rules (a shell command is allowed only when every program in it is), then
 * ask rules, then the mode. Pure and deterministic: it runs inside the turn workflow.
 */
import { DEFAULT_RULES, SHELL_TOOL } from './defaults';
import {
  commandMatches,
  escapeRegex,
  hasCommandConditions,
  outsideArgPaths,
  outsidePaths,
  re,
  toolApplies,
  type PolicyCall,
} from './match';
import type { Policy, Rule, RuleDecision } from './schema';
import { analyzeCommand, type CommandAnalysis, type SimpleCommand } from './shell';

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

/** The rules a policy applies, in order: its own, then the defaults unless turned off. */
export function effectiveRules(policy: Policy): readonly Rule[] {
  return policy.defaults ? [...policy.rules, ...DEFAULT_RULES] : policy.rules;
}

/** Decides one call under the policy and the session's `--always` rules. */
export function decide(policy: Policy, call: PolicyCall, sessionRules: readonly Rule[] = []): Decision {
  const config = effectiveRules(policy).map((rule, i) => ({ rule, label: rule.id ?? `rules[${i}]` }));
  const session = sessionRules.map((rule) => ({ rule, label: rule.id ?? `session rule for ${rule.tool}` }));
  const command = shellCommand(call);
  const analysis = command === undefined ? undefined : analyzeCommand(command);
  const programs = analysis && [...new Set(analysis.commands.map((c) => c.program).filter(Boolean))];
  const done = (d: Decision): Decision => (programs ? { ...d, programs } : d);
  const of = (decision: RuleDecision, list: Labelled[]) => list.filter((r) => r.rule.decision === decision);

  for (const r of [...of('deny', config), ...of('deny', session)]) {
    const hit = matchAny(r.rule, call, analysis);
    if (hit) return done({ decision: 'deny', rule: r.label, reason: denial(r, hit, call) });
  }

  if (!analysis || analysis.ok) {
    const allowed = coverage([...of('allow', session), ...of('allow', config)], call, analysis);
    if (allowed.ok) return done({ decision: 'allow', rule: allowed.labels.join(', '), reason: allowed.reason });
    for (const r of of('ask', [...config, ...session])) {
      if (matchAny(r.rule, call, analysis)) return done({ decision: 'ask', rule: r.label, reason: because(r) });
    }
    const subject = allowed.missing.length ? allowed.missing.map((p) => `\`${p}\``).join(', ') : `\`${call.tool}\``;
    return done(fallback(policy, subject));
  }

  // Unparsable: never allowed, since we cannot tell what would run; denials above still applied.
  for (const r of of('ask', [...config, ...session])) {
    if (matchAny(r.rule, call, analysis)) return done({ decision: 'ask', rule: r.label, reason: because(r) });
  }
  const reason = `the command cannot be analysed: ${analysis.reason}`;
  return done(policy.mode === 'strict' ? { decision: 'deny', rule: 'mode strict', reason } : { decision: 'ask', rule: 'unparsable', reason });
}

/** The session-scoped allow rule an `--always` approval adds: the tool, and for shell commands the
 * first program with its first non-flag argument (`git commit -m x` → `git commit`). */
export function alwaysRuleFor(call: PolicyCall): Rule {
  const base = { tool: call.tool, decision: 'allow' as const, reason: 'approved with --always for this session' };
  const command = shellCommand(call);
  if (command === undefined) return { ...base, id: `always:${call.tool}` };
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

/** What a deny or ask rule matched: a program of the command, or the call as a whole. */
type Hit = { command: SimpleCommand } | { call: true };

function matchAny(rule: Rule, call: PolicyCall, analysis: CommandAnalysis | undefined): Hit | undefined {
  if (!toolApplies(rule, call)) return undefined;
  const when = rule.when ?? {};
  const perCommand = hasCommandConditions(when);
  if (!analysis) {
    if (perCommand) return undefined;
    if (when.outsideWorkspace !== undefined && outsideArgPaths(call.args).length > 0 !== when.outsideWorkspace) return undefined;
    return { call: true };
  }
  if (!perCommand && when.outsideWorkspace === undefined) return { call: true };
  const command = analysis.commands.find((c) => commandMatches(when, c, false));
  return command && { command };
}

function coverage(
  rules: Labelled[],
  call: PolicyCall,
  analysis: CommandAnalysis | undefined,
): { ok: true; labels: string[]; reason: string } | { ok: false; missing: string[] } {
  if (!analysis) {
    const r = rules.find((x) => matchAny(x.rule, call, undefined));
    return r ? { ok: true, labels: [r.label], reason: `\`${call.tool}\` is allowed by rule ${r.label}${why(r)}` } : { ok: false, missing: [] };
  }
  const labels: string[] = [];
  const missing: string[] = [];
  for (const command of analysis.commands) {
    const r = rules.find((x) => covers(x.rule, call, command));
    if (r) labels.push(r.label);
    else missing.push(command.program || command.text);
  }
  if (missing.length) return { ok: false, missing: [...new Set(missing)] };
  const unique = [...new Set(labels)];
  if (!unique.length) return { ok: true, labels: ['nothing-to-run'], reason: 'the command runs no program' };
  return { ok: true, labels: unique, reason: `every program is allowed (${unique.join(', ')})` };
}

function covers(rule: Rule, call: PolicyCall, command: SimpleCommand): boolean {
  if (!toolApplies(rule, call)) return false;
  const when = rule.when ?? {};
  const perCommand = hasCommandConditions(when);
  if (!perCommand && when.outsideWorkspace === undefined) return true;
  return commandMatches(when, command, perCommand);
}

function denial(r: Labelled, hit: Hit, call: PolicyCall): string {
  const tail = `denied by rule ${r.label}${why(r)}`;
  if ('call' in hit) {
    const outside = r.rule.when?.outsideWorkspace ? outsideArgPaths(call.args) : [];
    return outside.length ? `\`${outside[0]}\` is outside the workspace: ${tail}` : `\`${call.tool}\` is ${tail}`;
  }
  const { command } = hit;
  const name = `\`${command.program || command.text}\`${command.via ? ` (run by ${command.via})` : ''}`;
  const when = r.rule.when ?? {};
  const target = when.redirect ? command.redirects.find((t) => re(when.redirect as string).test(t)) : undefined;
  if (target !== undefined) return `${name} writes to \`${target}\`: ${tail}`;
  const outside = when.outsideWorkspace ? outsidePaths(command) : [];
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
