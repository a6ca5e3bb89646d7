/** The permission policy: schema, default rules, shell analysis and the decision function. */
export { alwaysPatternProblem, alwaysRuleFor, describeGrant, MAX_ALWAYS_PATTERN } from './always';
export { decide, effectiveRules, exactPolicy, freezePolicy, type Decision } from './decide';
export { DEFAULT_RULES, READ_ONLY_PROGRAMS, SHELL_TOOL } from './defaults';
export { LEGACY_RULES } from './legacy';
export { isOutsideWorkspace, urlHost, SKILLS, WORKSPACE, type PolicyCall } from './match';
export { notReadOnlyExact as notReadOnly } from './programs';
export {
  parsePolicy,
  PolicyConfigError,
  policySchemas,
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
