import { z } from 'zod';

const literal = z.union([z.string(), z.number(), z.boolean()]);

/** One limit a rule enforces on one field. Exactly one kind per rule. */
export const policyCheckSchema = z.union([
  z.object({ max: z.number().finite() }).strict(),
  z.object({ min: z.number().finite() }).strict(),
  z.object({ oneOf: z.array(literal).min(1) }).strict(),
  z.object({ noneOf: z.array(literal).min(1) }).strict(),
  z.object({ maxItems: z.number().int().nonnegative() }).strict(),
]);

/**
 * A business rule as plain data, so a rule set can live in JSON and change without a deploy
 * (raising a refund limit from $50 to $75 is a data change in one place).
 *
 * - `tool`: the tool name it governs, or `*` for every tool.
 * - `when`: the rule applies only if the principal has ANY of `roles` and the tenant is one of
 *   `tenants` (each condition only when given). Absent: applies to everyone.
 * - `field`: a dot path into the validated arguments (`amount`, `shipping.country`,
 *   `line_items.0.quantity`; numeric segments index arrays).
 * - `check`: `{max}`/`{min}` (inclusive bounds on a number), `{oneOf}`/`{noneOf}` (allowed /
 *   forbidden literal values), `{maxItems}` (array length).
 * - `reason`: actionable, model-readable text; `{value}` and `{limit}` are replaced with the
 *   offending value (the item count for maxItems) and the rule's limit.
 * - `alternative`: what the model can do instead; its presence makes the refusal retryable.
 */
export const policyRuleSchema = z
  .object({
    id: z.string().min(1),
    tool: z.string().min(1),
    when: z
      .object({
        roles: z.array(z.string().min(1)).min(1).optional(),
        tenants: z.array(z.string().min(1)).min(1).optional(),
      })
      .strict()
      .optional(),
    field: z
      .string()
      .min(1)
      .refine(
        (path) => path.split('.').every((segment) => segment.length > 0),
        'must be a dot path without empty segments',
      ),
    check: policyCheckSchema,
    reason: z.string().min(1),
    alternative: z.string().min(1).optional(),
  })
  .strict();

export type PolicyCheck = z.infer<typeof policyCheckSchema>;
export type PolicyRule = z.infer<typeof policyRuleSchema>;

/** Thrown when a rule set is not valid data; the message lists every problem. */
export class PolicyRulesError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PolicyRulesError';
  }
}

const ruleSetSchema = z.array(policyRuleSchema).superRefine((rules, ctx) => {
  const seen = new Set<string>();
  rules.forEach((rule, i) => {
    if (seen.has(rule.id))
      ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `duplicate rule id "${rule.id}"` });
    seen.add(rule.id);
  });
});

/**
 * Validates rule data (e.g. parsed JSON) and returns the rules in the same order. Throws
 * {@link PolicyRulesError} on any unknown key, missing field, malformed check or duplicate id: a
 * policy that cannot be read must stop the process at start-up, not be half-applied.
 */
export function parsePolicyRules(data: unknown): PolicyRule[] {
  const parsed = ruleSetSchema.safeParse(data);
  if (!parsed.success) {
    throw new PolicyRulesError(`Invalid policy rules:\n${z.prettifyError(parsed.error)}`, {
      cause: parsed.error,
    });
  }
  return parsed.data;
}
