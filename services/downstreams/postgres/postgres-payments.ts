import type pg from 'pg';
import type { Clock } from '../../../libs/core/clock.js';
import type { PaymentsApi, RefundReason, RefundReceipt, RefundRequest } from '../payments/payments-api.js';
import { refundId, refundRefusal } from '../payments/refund-rules.js';

interface RefundRow {
  seq: string;
  tenant: string;
  order_id: string;
  amount_cents: number;
  reason: RefundReason;
  idempotency_key: string;
  created_at: Date;
}

const COLUMNS =
  'seq, tenant, order_id, amount_cents::int AS amount_cents, reason, idempotency_key, created_at';

/**
 * Payments service backed by `store_charges` and the `store_refunds` ledger. See {@link PaymentsApi}.
 *
 * A refund runs in one transaction that first locks the order's charge row, so refunds of one order
 * are checked against the balance one at a time, and a second request with the same key waits and
 * then finds the first one's receipt. The ledger's unique (tenant, idempotency_key) constraint is
 * the last line: a same-key race across two orders ends with one row, and the loser is answered
 * from it.
 */
export class PostgresPayments implements PaymentsApi {
  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: Clock,
  ) {}

  async refund(request: RefundRequest): Promise<RefundReceipt> {
    try {
      return await this.#refundOnce(request);
    } catch (err) {
      if ((err as { code?: unknown }).code !== '23505') throw err;
      return this.#refundOnce(request);
    }
  }

  async findRefund(tenant: string, idempotencyKey: string): Promise<RefundReceipt | undefined> {
    const { rows } = await this.pool.query<RefundRow>(
      `SELECT ${COLUMNS} FROM store_refunds WHERE tenant = $1 AND idempotency_key = $2`,
      [tenant, idempotencyKey],
    );
    return rows[0] === undefined ? undefined : toReceipt(rows[0]);
  }

  async ledger(filter: { readonly tenant: string; readonly order_id?: string }): Promise<RefundReceipt[]> {
    const { rows } = await this.pool.query<RefundRow>(
      `SELECT ${COLUMNS} FROM store_refunds
        WHERE tenant = $1 AND ($2::text IS NULL OR order_id = $2) ORDER BY seq`,
      [filter.tenant, filter.order_id ?? null],
    );
    return rows.map(toReceipt);
  }

  async #refundOnce(request: RefundRequest): Promise<RefundReceipt> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const charge = await client.query<{ captured_cents: number }>(
        `SELECT captured_cents::int AS captured_cents FROM store_charges
          WHERE tenant = $1 AND order_id = $2 FOR UPDATE`,
        [request.tenant, request.order_id],
      );
      const existing = await client.query<RefundRow>(
        `SELECT ${COLUMNS} FROM store_refunds WHERE tenant = $1 AND idempotency_key = $2`,
        [request.tenant, request.idempotency_key],
      );
      const refunded = await client.query<{ sum: number }>(
        'SELECT coalesce(sum(amount_cents), 0)::int AS sum FROM store_refunds WHERE tenant = $1 AND order_id = $2',
        [request.tenant, request.order_id],
      );
      const prior = existing.rows[0] === undefined ? undefined : toReceipt(existing.rows[0]);
      const refusal = refundRefusal(
        request,
        prior,
        charge.rows[0]?.captured_cents,
        refunded.rows[0]?.sum ?? 0,
      );
      if (refusal !== undefined) throw refusal;
      let receipt = prior;
      if (receipt === undefined) {
        const inserted = await client.query<RefundRow>(
          `INSERT INTO store_refunds (tenant, order_id, amount_cents, reason, idempotency_key, created_at)
           VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
          [
            request.tenant,
            request.order_id,
            request.amount_cents,
            request.reason,
            request.idempotency_key,
            new Date(this.clock.now()),
          ],
        );
        receipt = toReceipt(inserted.rows[0]!);
      }
      await client.query('COMMIT');
      client.release();
      return receipt;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      client.release();
      throw err;
    }
  }
}

function toReceipt(row: RefundRow): RefundReceipt {
  return {
    refund_id: refundId(Number(row.seq)),
    tenant: row.tenant,
    order_id: row.order_id,
    amount_cents: row.amount_cents,
    reason: row.reason,
    status: 'succeeded',
    created_at: row.created_at.toISOString(),
    idempotency_key: row.idempotency_key,
  };
}
