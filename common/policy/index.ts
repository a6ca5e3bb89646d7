/** The permission policy: schema, default rules, shell analysis and the decision function. */
export { alwaysRuleFor, decide, effectiveRules, freezePolicy, type Decision } from './decide';
export { DEFAULT_RULES, READ_ONLY_PROGRAMS, SHELL_TOOL } from './defaults';
export { LEGACY_RULES } from './legacy';
export { isOutsideWorkspace, urlHost, SKILLS, WORKSPACE, type PolicyCall } from './match';
export { notReadOnly } from './options';
export {
  parsePolicy,
  PolicyConfigError,
  policySchema,
  ruleSchema,
  POLICY_MODES,
  POLICY_VERSIONS,
  type Policy,
  type PolicyInput,
  type PolicyMode,
  type Rule,
  type RuleCondition,
  type RuleDecision,
} from './schema';
export { analyzeCommand } from './shell';
export type { CommandAnalysis, SimpleCommand } from './types';
