import type { AggregateFact } from '../../libs/core/aggregate-fact.js';
import type { PolicySource } from '../../libs/policy/policy-engine.js';

/** Identifies the policy below; bump it whenever a rule or fact changes (preview tokens bind to it). */
export const STORE_POLICY_VERSION = 'store-2026.12.1';

const DAY_MS = 24 * 3_600_000;

/**
 * The aggregates the store's rules read. Each is kept per resource key (one order, one SKU), which
 * is the key calls are serialized by, so a limit over it cannot be raced: the calls on one order
 * run one at a time, each judged with every earlier settled one counted.
 */
export const STORE_POLICY_FACTS: readonly AggregateFact[] = [
  {
    name: 'refunded_by_support_30d',
    tools: ['issue_refund'],
    measure: { sum: 'amount' },
    per: ['resourceKey'],
    windowMs: 30 * DAY_MS,
    by: { roles: ['support'] },
  },
  {
    name: 'refunded_self_service_30d',
    tools: ['issue_refund'],
    measure: { sum: 'amount' },
    per: ['resourceKey'],
    windowMs: 30 * DAY_MS,
    by: { roles: ['customer'] },
  },
  {
    name: 'stock_change_by_support_24h',
    tools: ['update_inventory'],
    measure: { sum: 'delta' },
    per: ['resourceKey'],
    windowMs: DAY_MS,
    by: { roles: ['support'] },
  },
];

/**
 * The store's business rules, in Cedar. A limit is a limit on the total, however the calls are
 * split: each fact is the total as it would stand with the call being judged counted. Alternatives
 * name only what a legitimate caller can do instead (hand the case to someone allowed to decide),
 * never a way to reach the same effect in smaller pieces.
 *
 * What is not here, and why: "a customer can never get back more than they paid" depends on the
 * order's payment, which only the payments service knows; it enforces it (refundable balance) and
 * the refusal reaches the model as CALLER_ERROR with the amount still refundable.
 */
export const STORE_POLICY_CEDAR = `// Support may refund at most $50 per order within 30 days, in total. Beyond that a manager decides.
@id("refund-support-limit")
@reason("Support may refund at most $50 per order within 30 days, in total; with this refund the order would reach \${facts.refunded_by_support_30d}.")
@alternative("Tell the customer a manager has to approve this refund and hand the case to a manager.")
forbid (principal, action == Toolgate::Action::"issue_refund", resource)
when {
  principal.roles.contains("support") &&
  context.facts.refunded_by_support_30d.greaterThan(decimal("50.0"))
};

// Customers serving themselves may get back at most $200 per order within 30 days, in total.
@id("refund-self-service-limit")
@reason("Self-service refunds are limited to $200 per order within 30 days, in total; with this refund the order would reach \${facts.refunded_self_service_30d}.")
@alternative("Offer to hand the conversation to a support agent, who can route it to a manager.")
forbid (principal, action == Toolgate::Action::"issue_refund", resource)
when {
  principal.roles.contains("customer") &&
  context.facts.refunded_self_service_30d.greaterThan(decimal("200.0"))
};

// Support may change one SKU's stock by at most 20 units a day, either way, in total.
@id("inventory-support-add-limit")
@reason("Support may add at most 20 units to one SKU per day, in total (asked: {args.delta}; today's total would be {facts.stock_change_by_support_24h}).")
@alternative("Ask the warehouse team to book larger deliveries or recounts.")
forbid (principal, action == Toolgate::Action::"update_inventory", resource)
when {
  principal.roles.contains("support") &&
  context.facts.stock_change_by_support_24h.greaterThan(decimal("20.0"))
};

@id("inventory-support-remove-limit")
@reason("Support may remove at most 20 units from one SKU per day, in total (asked: {args.delta}; today's total would be {facts.stock_change_by_support_24h}).")
@alternative("Ask the warehouse team to book larger write-offs or recounts.")
forbid (principal, action == Toolgate::Action::"update_inventory", resource)
when {
  principal.roles.contains("support") &&
  context.facts.stock_change_by_support_24h.lessThan(decimal("-20.0"))
};
`;

/** The store's policy as the engine takes it (`createPolicyEngine(STORE_POLICY, tools)`). */
export const STORE_POLICY: PolicySource = {
  version: STORE_POLICY_VERSION,
  cedar: STORE_POLICY_CEDAR,
  facts: STORE_POLICY_FACTS,
};
