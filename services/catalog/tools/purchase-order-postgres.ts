import type pg from 'pg';
import { underSchemaLock } from '../../../libs/adapters/postgres/schema-lock.js';
import type { Clock } from '../../../libs/core/clock.js';
import { DownstreamError } from '../../downstreams/downstream-error.js';
import {
  seedSuppliers,
  type CreatePurchaseOrderRequest,
  type PurchaseOrder,
  type PurchaseOrderApi,
  type Supplier,
} from './purchase-order-backend.js';

/**
 * The purchasing service's own tables (like the other fake services' `store_*` tables, they belong
 * to the service, not to toolgate's migrations).
 */
const SCHEMA_SQL = `
CREATE TABLE IF NOT EXISTS store_suppliers (
  tenant      text  NOT NULL,
  supplier_id text  NOT NULL,
  body        jsonb NOT NULL,
  PRIMARY KEY (tenant, supplier_id)
);
CREATE TABLE IF NOT EXISTS store_purchase_orders (
  seq        bigserial   PRIMARY KEY,
  tenant     text        NOT NULL,
  reference  text        NOT NULL,
  body       jsonb       NOT NULL,
  created_at timestamptz NOT NULL,
  UNIQUE (tenant, reference)
);`;

/**
 * Creates the purchasing tables in the pool's schema if missing and inserts the seed suppliers not
 * there yet. Safe to run concurrently: one transaction under an advisory lock keyed by the schema.
 */
export async function ensurePurchaseOrderSchema(
  pool: pg.Pool,
  suppliers: readonly Supplier[] = seedSuppliers(),
): Promise<void> {
  await underSchemaLock(pool, 'toolgate.store_purchasing', async (client) => {
    await client.query(SCHEMA_SQL);
    for (const s of suppliers) {
      await client.query(
        'INSERT INTO store_suppliers (tenant, supplier_id, body) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
        [s.tenant, s.supplier_id, JSON.stringify(s)],
      );
    }
  });
}

/**
 * The purchasing service over Postgres (see {@link PurchaseOrderApi}); run
 * {@link ensurePurchaseOrderSchema} first. `create` is one `INSERT ... ON CONFLICT (tenant,
 * reference) DO NOTHING`, then a read of the row that won, so concurrent creates with one reference
 * place one order and all return it.
 */
export class PostgresPurchaseOrders implements PurchaseOrderApi {
  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: Clock,
  ) {}

  async supplier(tenant: string, supplierId: string): Promise<Supplier | undefined> {
    const { rows } = await this.pool.query<{ body: Supplier }>(
      'SELECT body FROM store_suppliers WHERE tenant = $1 AND supplier_id = $2',
      [tenant, supplierId],
    );
    return rows[0]?.body;
  }

  async create(request: CreatePurchaseOrderRequest): Promise<PurchaseOrder> {
    if (request.quote.lines.length === 0) throw new DownstreamError(400, 'empty_order', 'No lines.');
    const createdAt = new Date(this.clock.now());
    // po_id comes from the row's own sequence number, drawn first so the body can carry it.
    await this.pool.query(
      `WITH id AS (SELECT nextval(pg_get_serial_sequence('store_purchase_orders', 'seq')) AS seq)
       INSERT INTO store_purchase_orders (seq, tenant, reference, body, created_at)
       SELECT id.seq, $1, $2, $3::jsonb || jsonb_build_object('po_id', 'PO-' || lpad(id.seq::text, 6, '0')), $4
         FROM id
       ON CONFLICT (tenant, reference) DO NOTHING`,
      [
        request.tenant,
        request.reference,
        JSON.stringify({
          ...request.quote,
          tenant: request.tenant,
          reference: request.reference,
          requested_by: request.requested_by,
          approved_by: request.approved_by,
          created_at: createdAt.toISOString(),
        }),
        createdAt,
      ],
    );
    const placed = await this.findByReference(request.tenant, request.reference);
    if (placed === undefined) throw new Error(`purchase order ${request.reference} vanished after insert`);
    return placed;
  }

  async findByReference(tenant: string, reference: string): Promise<PurchaseOrder | undefined> {
    const { rows } = await this.pool.query<{ body: PurchaseOrder }>(
      'SELECT body FROM store_purchase_orders WHERE tenant = $1 AND reference = $2',
      [tenant, reference],
    );
    return rows[0]?.body;
  }

  async list(tenant: string): Promise<PurchaseOrder[]> {
    const { rows } = await this.pool.query<{ body: PurchaseOrder }>(
      'SELECT body FROM store_purchase_orders WHERE tenant = $1 ORDER BY seq',
      [tenant],
    );
    return rows.map((r) => r.body);
  }
}
