/** The permission policy: schema, default rules, shell analysis and the decision function. */
export { alwaysRuleFor, decide, effectiveRules, type Decision } from './decide';
export { DEFAULT_RULES, READ_ONLY_PROGRAMS, SHELL_TOOL } from './defaults';
export { isOutsideWorkspace, WORKSPACE, type PolicyCall } from './match';
export {
  parsePolicy,
  PolicyConfigError,
  policySchema,
  ruleSchema,
  POLICY_MODES,
  type Policy,
  type PolicyInput,
  type PolicyMode,
  type Rule,
  type RuleCondition,
  type RuleDecision,
} from './schema';
export { analyzeCommand, type CommandAnalysis, type SimpleCommand } from './shell';
