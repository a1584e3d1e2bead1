import { deepFreeze } from '../core/deep-freeze.js';
import type { ExecutionContext } from '../core/types.js';
import type { PolicyDecision, PolicyEngine } from '../pipeline/deps.js';
import type { ToolDefinition } from '../registry/tool-definition.js';
import { readPath } from './field-path.js';
import { applyCheck } from './policy-check.js';
import { parsePolicyRules, PolicyRulesError } from './policy-rule.js';
import type { PolicyRule } from './policy-rule.js';

const MAX_SHOWN_CHARS = 60;

/**
 * Builds the business-rule engine of stage 4 from plain rule data (see {@link PolicyRule}).
 *
 * Contract:
 * - The rules are validated ({@link parsePolicyRules}; throws {@link PolicyRulesError}) and copied,
 *   so later changes to the input array do not change the policy in force. `version` (non-empty)
 *   identifies this rule set.
 * - `evaluate` is pure and synchronous: no I/O, no clock, same answer for the same input.
 * - Rules are tried in array order; the first violated rule that applies wins and its reason is
 *   returned with `{value}` / `{limit}` filled in. A rule applies when its `tool` matches (or is
 *   `*`) and its `when` conditions hold; roles come only from `ctx.principal.roles` (verified), the
 *   tenant only from `ctx.tenant`.
 * - A field that is absent or null is not checked (whether it is required is the schema's job);
 *   a present value the check cannot compare is a violation (fail closed).
 * - Roles do not rank: a principal who is both `support` and `manager` is bound by every rule
 *   written for either role. Write role-scoped limits for the roles they restrict.
 */
export function createPolicyEngine(rules: readonly PolicyRule[], version: string): PolicyEngine {
  if (typeof version !== 'string' || version.length === 0) {
    throw new PolicyRulesError('A policy version must be a non-empty string.');
  }
  const frozen = Object.freeze(parsePolicyRules(structuredClone(rules)).map(deepFreeze));
  return {
    version,
    evaluate(tool: ToolDefinition, args: unknown, ctx: ExecutionContext): PolicyDecision {
      const roles = principalRoles(ctx);
      for (const rule of frozen) {
        if (!applies(rule, tool.name, ctx.tenant, roles)) continue;
        const value = readPath(args, rule.field);
        if (value === undefined || value === null) continue;
        const finding = applyCheck(rule.check, value);
        if (!finding.violated) continue;
        // One pass, so a "{limit}" inside the model's own value is not expanded.
        const reason = rule.reason.replace(/\{(value|limit)\}/g, (_, name) =>
          name === 'value' ? shown(finding.shown) : finding.limit,
        );
        return {
          allowed: false,
          ruleId: rule.id,
          reason,
          ...(rule.alternative === undefined ? {} : { alternative: rule.alternative }),
        };
      }
      return { allowed: true };
    },
  };
}

function applies(rule: PolicyRule, tool: string, tenant: string, roles: ReadonlySet<string>): boolean {
  if (rule.tool !== '*' && rule.tool !== tool) return false;
  const when = rule.when;
  if (when?.tenants !== undefined && !when.tenants.includes(tenant)) return false;
  if (when?.roles !== undefined && !when.roles.some((role) => roles.has(role))) return false;
  return true;
}

function principalRoles(ctx: ExecutionContext): ReadonlySet<string> {
  const roles: unknown = ctx.principal?.roles;
  return new Set(Array.isArray(roles) ? roles.filter((r): r is string => typeof r === 'string') : []);
}

function shown(value: unknown): string {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number' || typeof value === 'boolean') text = String(value);
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  return text.length > MAX_SHOWN_CHARS ? `${text.slice(0, MAX_SHOWN_CHARS)}…` : text;
}
