/** The permission policy: schema, default rules, shell analysis and the decision function. */
export { alwaysRuleFor } from './always';
export { decide, freezePolicy } from './decide';
export type { Policy, Rule } from './schema';
