/** Why money goes back; a closed set, so the ledger and the model agree on the words. */
export const REFUND_REASONS = ['damaged', 'not_delivered', 'wrong_item', 'late', 'other'] as const;
export type RefundReason = (typeof REFUND_REASONS)[number];

export interface RefundRequest {
  readonly tenant: string;
  readonly order_id: string;
  readonly amount_cents: number;
  readonly reason: RefundReason;
  /** Computed once per logical call by the caller and sent on every attempt. */
  readonly idempotency_key: string;
}

/** One row of the payment ledger: a refund that was applied. Written by the payments service only. */
export interface RefundReceipt {
  readonly refund_id: string;
  readonly tenant: string;
  readonly order_id: string;
  readonly amount_cents: number;
  readonly reason: RefundReason;
  readonly status: 'succeeded';
  /** ISO 8601, UTC. */
  readonly created_at: string;
  readonly idempotency_key: string;
}

/** The captured payment of one order: what can be refunded at most. */
export interface Charge {
  readonly tenant: string;
  readonly order_id: string;
  readonly captured_cents: number;
}

/**
 * The payments service, behaving like a Stripe-style API.
 *
 * `refund`:
 * - deduplicates on (tenant, idempotency_key): a request whose key was already applied returns the
 *   ORIGINAL receipt and moves no money, however often it is repeated, concurrently or not; the same
 *   key with a different order or amount is refused 409 `idempotency_key_reused`;
 * - refuses 404 `no_charge` for an order without a captured payment, 400 `invalid_amount` for a
 *   non-positive or fractional cent amount, and 422 `exceeds_refundable` (details: captured_cents,
 *   refunded_cents, refundable_cents) when the refunds of the order would exceed what was captured;
 * - every refusal applies nothing.
 *
 * `findRefund` is the status check: the receipt applied under that key, if any. `ledger` lists the
 * applied refunds of a tenant (optionally one order), oldest first.
 */
export interface PaymentsApi {
  refund(request: RefundRequest, signal?: AbortSignal): Promise<RefundReceipt>;
  findRefund(
    tenant: string,
    idempotencyKey: string,
    signal?: AbortSignal,
  ): Promise<RefundReceipt | undefined>;
  ledger(filter: { readonly tenant: string; readonly order_id?: string }): Promise<RefundReceipt[]>;
}
