import type { PolicyRule } from '../../libs/policy/policy-rule.js';

/** Identifies the rule set below; bump it whenever a rule changes (preview tokens bind to it). */
export const STORE_POLICY_VERSION = 'store-2026.11.1';

/**
 * The store's business rules as data: a limit that changes is an edit here, not a code
 * change in a tool. First violated rule wins; `when.roles` come from the verified principal only.
 *
 * What is not here, and why: "a customer can never get back more than they paid" depends on the
 * order's payment and earlier refunds, which a pure rule cannot read; the payments service enforces
 * it (refundable balance) and the refusal reaches the model as CALLER_ERROR with the amount still
 * refundable.
 */
export const STORE_POLICY_RULES: readonly PolicyRule[] = [
  {
    id: 'refund-support-limit',
    tool: 'issue_refund',
    when: { roles: ['support'] },
    field: 'amount',
    check: { max: 50 },
    reason: 'Refunds above $50 need a manager.',
    alternative: 'Split it or route it to a manager.',
  },
  {
    id: 'refund-self-service-limit',
    tool: 'issue_refund',
    when: { roles: ['customer'] },
    field: 'amount',
    check: { max: 200 },
    reason: 'Self-service refunds are limited to ${limit} (asked: ${value}).',
    alternative: 'Offer to hand the conversation to a support agent, who can route it to a manager.',
  },
  {
    id: 'inventory-support-add-limit',
    tool: 'update_inventory',
    when: { roles: ['support'] },
    field: 'delta',
    check: { max: 20 },
    reason: 'Support may add at most {limit} units at once (asked: {value}).',
    alternative: 'Ask the warehouse team to book larger deliveries or recounts.',
  },
  {
    id: 'inventory-support-remove-limit',
    tool: 'update_inventory',
    when: { roles: ['support'] },
    field: 'delta',
    check: { min: -20 },
    reason: 'Support may remove at most 20 units at once (asked: {value}).',
    alternative: 'Ask the warehouse team to book larger write-offs or recounts.',
  },
];
