import { DownstreamError } from '../downstream-error.js';
import type { RefundReceipt, RefundRequest } from './payments-api.js';

/**
 * The payment service's own checks, shared by its in-memory and Postgres implementations so both
 * refuse the same requests with the same reasons. Returns the refusal, or undefined to go ahead.
 *
 * `existing` is the receipt already stored under the request's key, `capturedCents` the order's
 * captured payment (undefined: none), `refundedCents` what was refunded on the order so far.
 */
export function refundRefusal(
  request: RefundRequest,
  existing: RefundReceipt | undefined,
  capturedCents: number | undefined,
  refundedCents: number,
): DownstreamError | undefined {
  if (existing !== undefined) {
    if (existing.order_id !== request.order_id || existing.amount_cents !== request.amount_cents) {
      return new DownstreamError(
        409,
        'idempotency_key_reused',
        'This idempotency key was used for a different refund.',
      );
    }
    return undefined;
  }
  if (!Number.isSafeInteger(request.amount_cents) || request.amount_cents <= 0) {
    return new DownstreamError(400, 'invalid_amount', 'The amount must be a positive number of cents.');
  }
  if (request.idempotency_key.length === 0) {
    return new DownstreamError(400, 'missing_idempotency_key', 'An idempotency key is required.');
  }
  if (capturedCents === undefined) {
    return new DownstreamError(404, 'no_charge', 'No captured payment exists for this order.');
  }
  const refundable = capturedCents - refundedCents;
  if (request.amount_cents > refundable) {
    return new DownstreamError(422, 'exceeds_refundable', 'The refund exceeds the refundable balance.', {
      captured_cents: capturedCents,
      refunded_cents: refundedCents,
      refundable_cents: refundable,
    });
  }
  return undefined;
}

/** Refund ids as the service shows them: `RF-000001`, from its ledger sequence. */
export function refundId(sequence: number): string {
  return `RF-${String(sequence).padStart(6, '0')}`;
}
