/**
 * The business-rule engine of guard stage 4: policies in Cedar (or as JSON rules translated to it),
 * validated against the tools' schemas at load, over the aggregate facts the pipeline provides.
 * Evaluation is pure; no I/O.
 */
export { createPolicyEngine, type PolicySource } from './policy-engine.js';
export {
  parsePolicyRules,
  policyRuleSchema,
  policyCheckSchema,
  PolicyRulesError,
  type PolicyRule,
  type PolicyCheck,
} from './policy-rule.js';
export {
  aggregateFactSchema,
  factSeries,
  contributionsOf,
  type AggregateFact,
  type FactDimension,
  type FactSeries,
} from './aggregate-fact.js';
export { readPath } from './field-path.js';
