/**
 * The permission policy as data: the `policy` section of harness.config.json, validated by zod
 * with one-line errors that name the field. Plain JSON after parsing, so it travels in history.
 */
import { z } from 'zod';
import { isRe2 } from './patterns';

/** The three policy modes: what happens to a call no rule decides. */
export const POLICY_MODES = ['strict', 'ask', 'auto'] as const;

/** Rule decisions. */
export const DECISIONS = ['allow', 'deny', 'ask'] as const;

const RISKS = ['read_only', 'write', 'network', 'dangerous'] as const;

/** The policy versions: none (the rules and semantics sessions were recorded with), 2 or 3 (the exact analysis). */
const POLICY_VERSIONS = [2, 3] as const;

/**
 * The policy's zod schemas. Built when first used, then kept: the workflow bundle's modules are
 * evaluated again for every workflow a thread creates, building these was about 4 ms of each, and
 * a workflow parses a policy only in a turn recorded before policies travelled parsed.
 */
function buildSchemas() {
  // Patterns are compiled by RE2 (linear time) whatever the policy version, so a rule accepted
  // today keeps working once it is frozen into a version 2 policy.
  const regex = z.string().refine(isRe2, {
    message: 'not valid RE2 syntax (lookaround and backreferences are not supported)',
  });

  /** When a rule applies; every given condition must hold. For `run_shell`, the command
   * conditions (command, commandPrefix, anyArg, noArg, redirect, outsideWorkspace) are checked on
   * each program the command runs: a deny or ask rule applies when one program matches, and
   * allow rules must cover every program. */
  const ruleCondition = z.strictObject({
    /** Program names (`*` wildcards, e.g. `mkfs*`), matched against every program in the command. */
    command: z.array(z.string().min(1)).min(1).optional(),
    /** Program and leading arguments, e.g. `git status`. */
    commandPrefix: z.string().trim().min(1).optional(),
    /** The whole `command` argument is exactly this text (what `--always` grants under version 3). */
    commandIs: z.string().min(1).optional(),
    /** A regular expression per tool argument, e.g. `{ "path": "^/etc" }`. */
    args: z.record(z.string(), regex).optional(),
    /** Some argument of the program matches this regular expression. */
    anyArg: regex.optional(),
    /** No argument of the program matches this regular expression (e.g. `sed` without `-i`). */
    noArg: regex.optional(),
    /** A file the program's output is redirected to matches. Allow rules that name programs do not
     * cover redirections into files unless this pattern matches every one of them. */
    redirect: regex.optional(),
    /** A path in the arguments (or a redirection) lies outside the workspace. */
    outsideWorkspace: z.boolean().optional(),
    /** The invocation only reads, by the built-in knowledge of each program's writing options
     * (`sort -o`, `sed -i` or a `w` command, `git diff --output` ...); programs it does not know
     * are not read-only. */
    readOnly: z.boolean().optional(),
    /** For calls with a `url` argument (http_request): its host name matches one of these
     * (`*` wildcards, case-insensitive), e.g. `["api.github.com", "*.example.org"]`. */
    host: z.array(z.string().min(1)).min(1).optional(),
    /** The tool's risk level is one of these. */
    risk: z.array(z.enum(RISKS)).min(1).optional(),
  });

  /** One policy rule: which tool (name, `*` wildcards allowed), when, and what to decide. */
  const rule = z.strictObject({
    id: z.string().min(1).optional(),
    tool: z.string().min(1),
    decision: z.enum(DECISIONS),
    when: ruleCondition.optional(),
    reason: z.string().min(1).optional(),
  });

  /** The policy section: mode (default `ask`), your rules, and whether the built-in rules apply after them. */
  const policy = z.strictObject({
    /** 3: the exact analysis (allow only what is fully understood). 2: RE2 patterns, and allow rules
     * never cover programs with assignments or words only known at run time. Without it: the rules
     * and semantics of sessions recorded before versions. */
    version: z.literal(POLICY_VERSIONS).optional(),
    mode: z.enum(POLICY_MODES).default('ask'),
    rules: z.array(rule).default([]),
    /** Include the default rule set (defaults.ts) after `rules`; turn off to replace its denials. */
    defaults: z.boolean().default(true),
  });
  return { ruleCondition, rule, policy };
}

type PolicySchemas = ReturnType<typeof buildSchemas>;
let schemas: PolicySchemas | undefined;

/** The schemas of a rule's conditions, a rule and the policy section. */
export function policySchemas(): PolicySchemas {
  return (schemas ??= buildSchemas());
}

/** A rule decision. */
export type RuleDecision = (typeof DECISIONS)[number];
/** A validated rule. */
export type Rule = z.output<PolicySchemas['rule']>;
/** A rule's conditions. */
export type RuleCondition = z.output<PolicySchemas['ruleCondition']>;
/** A validated policy, defaults filled in. */
export type Policy = z.output<PolicySchemas['policy']>;
/** The policy as written in the config file (fields with defaults may be left out). */
export type PolicyInput = z.input<PolicySchemas['policy']>;

/** Raised for an invalid policy; the message is one line naming the field. */
export class PolicyConfigError extends Error {
  override name = 'PolicyConfigError';
}

/** Validates a policy section (`undefined` gives the default policy); throws PolicyConfigError. */
export function parsePolicy(input: unknown): Policy {
  const parsed = policySchemas().policy.safeParse(input ?? {});
  if (parsed.success) return parsed.data;
  const message = parsed.error.issues
    .map((issue) => `${['policy', ...issue.path.map(String)].join('.')}: ${issue.message}`)
    .join('; ');
  throw new PolicyConfigError(message);
}
