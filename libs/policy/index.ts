/** The data-driven business-rule engine of guard stage 4. Pure; no I/O. */
export { createPolicyEngine } from './policy-engine.js';
export {
  parsePolicyRules,
  policyRuleSchema,
  policyCheckSchema,
  PolicyRulesError,
  type PolicyRule,
  type PolicyCheck,
} from './policy-rule.js';
export { applyCheck, type CheckFinding } from './policy-check.js';
export { readPath } from './field-path.js';
