import type { Clock } from '../../../libs/core/clock.js';
import type { Charge, PaymentsApi, RefundReceipt, RefundRequest } from './payments-api.js';
import { refundId, refundRefusal } from './refund-rules.js';

/**
 * In-process payments service. Each refund is checked and applied without yielding, so concurrent
 * requests with one key can never both apply (the same guarantee the Postgres version gets from a
 * row lock). See {@link PaymentsApi} for the contract.
 */
export class MemoryPayments implements PaymentsApi {
  readonly #clock: Clock;
  readonly #captured = new Map<string, number>();
  readonly #ledger: RefundReceipt[] = [];

  constructor(charges: readonly Charge[], clock: Clock) {
    this.#clock = clock;
    for (const c of charges) this.#captured.set(orderKey(c.tenant, c.order_id), c.captured_cents);
  }

  async refund(request: RefundRequest): Promise<RefundReceipt> {
    const existing = this.#ledger.find(
      (r) => r.tenant === request.tenant && r.idempotency_key === request.idempotency_key,
    );
    const refunded = this.#ledger
      .filter((r) => r.tenant === request.tenant && r.order_id === request.order_id)
      .reduce((sum, r) => sum + r.amount_cents, 0);
    const refusal = refundRefusal(
      request,
      existing,
      this.#captured.get(orderKey(request.tenant, request.order_id)),
      refunded,
    );
    if (refusal !== undefined) throw refusal;
    if (existing !== undefined) return { ...existing };
    const receipt: RefundReceipt = {
      refund_id: refundId(this.#ledger.length + 1),
      tenant: request.tenant,
      order_id: request.order_id,
      amount_cents: request.amount_cents,
      reason: request.reason,
      status: 'succeeded',
      created_at: new Date(this.#clock.now()).toISOString(),
      idempotency_key: request.idempotency_key,
    };
    this.#ledger.push(receipt);
    return { ...receipt };
  }

  async findRefund(tenant: string, idempotencyKey: string): Promise<RefundReceipt | undefined> {
    const found = this.#ledger.find((r) => r.tenant === tenant && r.idempotency_key === idempotencyKey);
    return found === undefined ? undefined : { ...found };
  }

  async ledger(filter: { readonly tenant: string; readonly order_id?: string }): Promise<RefundReceipt[]> {
    return this.#ledger
      .filter(
        (r) =>
          r.tenant === filter.tenant && (filter.order_id === undefined || r.order_id === filter.order_id),
      )
      .map((r) => ({ ...r }));
  }
}

const orderKey = (tenant: string, orderId: string): string => `${tenant}\u0000${orderId}`;
