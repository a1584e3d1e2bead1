import { z } from 'zod';
import type { Clock } from '../../../libs/core/clock.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import type { OrdersApi } from '../../downstreams/orders/orders-api.js';
import { REFUND_REASONS, type PaymentsApi } from '../../downstreams/payments/payments-api.js';
import { callDownstream, type RefusalWording } from '../downstream-failure.js';
import { centsToDollars, dollarsToCents, formatDollars } from '../money.js';
import { mayActOnOrder } from '../order-access.js';
import { orderIdField } from './fields.js';

const input = z.strictObject({
  order_id: orderIdField,
  amount: z
    .number()
    .positive()
    .max(10_000)
    .multipleOf(0.01)
    .describe(
      'Amount to refund in US dollars with at most 2 decimals, e.g. 49.99. Positive and at most what the customer paid for the order (check with lookup_order). Support assistants may refund at most 50.00 per order (in total, within 30 days) without a manager.',
    ),
  reason: z
    .enum(REFUND_REASONS)
    .describe(
      "Why the money goes back: 'damaged' (arrived broken), 'not_delivered', 'wrong_item', 'late', or 'other' when none fits.",
    ),
});

const output = z.object({
  refund_id: z.string(),
  order_id: z.string(),
  amount: z.number(),
  currency: z.literal('USD'),
  reason: z.enum(REFUND_REASONS),
  status: z.literal('succeeded'),
  created_at: z.string(),
});

export type IssueRefundInput = z.infer<typeof input>;
export type IssueRefundOutput = z.infer<typeof output>;

function refusalWording(
  reason: string,
  details: Readonly<Record<string, string | number>>,
): RefusalWording | undefined {
  switch (reason) {
    case 'exceeds_refundable': {
      const refundable = Number(details.refundable_cents ?? 0);
      return refundable > 0
        ? {
            message: `The refund exceeds what can still be refunded on this order: at most ${formatDollars(refundable)} (already refunded ${formatDollars(Number(details.refunded_cents ?? 0))}).`,
            suggestedFix: `Refund at most ${formatDollars(refundable)}, or tell the customer the order was already refunded.`,
          }
        : {
            message: 'This order has already been refunded in full; nothing is left to refund.',
            retryable: false,
          };
    }
    case 'no_charge':
      return {
        message: 'No payment was captured for this order, so there is nothing to refund.',
        retryable: false,
      };
    case 'invalid_amount':
      return {
        message: 'The amount must be positive with at most 2 decimals.',
        suggestedFix: 'Use e.g. 49.99.',
      };
    case 'idempotency_key_reused':
      return { message: 'This refund request conflicts with an earlier one.', retryable: false };
    default:
      return undefined;
  }
}

/**
 * `issue_refund` (state-changing, destructive): sends money back through the payments service.
 *
 * - Visible with `refunds:write`; allowed on orders the principal (or the user it acts for) owns, or
 *   for support staff of the tenant ({@link mayActOnOrder}).
 * - Serialized per order: conflict key `<tenant>:order:<order_id>`.
 * - Retry safety `forwards-key`: the idempotency key toolgate computed once is sent as the payment
 *   API's idempotency key on every attempt, so a retry after a lost answer returns the first
 *   receipt instead of paying twice. 2 s per attempt, 3 attempts.
 * - The payment service refuses amounts above the order's refundable balance; that refusal reaches
 *   the model as CALLER_ERROR with the balance it may still refund.
 */
export function issueRefundTool(deps: {
  readonly orders: OrdersApi;
  readonly payments: PaymentsApi;
  readonly clock: Clock;
}): ToolDefinition<IssueRefundInput, IssueRefundOutput> {
  return defineTool({
    name: 'issue_refund',
    version: '1.0.0',
    description:
      'Send money back to the original payment method for part or all of one order. Use it only after the customer asked for a refund and lookup_order confirmed the order and what was paid. It moves real money: never call it twice for the same request, and never to give store credit or a goodwill gesture. As support you may refund at most $50 per order within 30 days in total; more needs a manager.',
    input,
    output,
    scopes: ['refunds:write'],
    owner: 'payments-team',
    destructive: true,
    stateChanging: true,
    authorize: (principal, args) => mayActOnOrder(deps.orders, deps.clock, principal, args.order_id),
    conflictKey: (args, ctx) => `${ctx.tenant}:order:${args.order_id}`,
    retrySafety: { kind: 'forwards-key' },
    downstream: 'payments',
    timeoutMs: 2_000,
    retry: { maxAttempts: 3, baseDelayMs: 200, maxDelayMs: 1_000 },
    auditFields: ['order_id', 'amount', 'reason'],
    // How much goes back, and on which order.
    decisiveFields: ['amount', 'order_id'],
    rateLimit: { capacity: 10, refillPerSecond: 0.5, per: ['principal'] },
    cost: { tokensIn: 90, tokensOut: 60 },
    execute: async (args, inv) => {
      const receipt = await callDownstream(
        () =>
          deps.payments.refund(
            {
              tenant: inv.ctx.tenant,
              order_id: args.order_id,
              amount_cents: dollarsToCents(args.amount),
              reason: args.reason,
              idempotency_key: inv.idempotencyKey,
            },
            inv.signal,
          ),
        refusalWording,
      );
      return {
        refund_id: receipt.refund_id,
        order_id: receipt.order_id,
        amount: centsToDollars(receipt.amount_cents),
        currency: 'USD' as const,
        reason: receipt.reason,
        status: receipt.status,
        created_at: receipt.created_at,
      };
    },
  });
}
