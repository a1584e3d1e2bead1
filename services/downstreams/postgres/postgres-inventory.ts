import type pg from 'pg';
import type { Clock } from '../../../libs/core/clock.js';
import { DownstreamError } from '../downstream-error.js';
import type {
  AdjustmentReason,
  AdjustRequest,
  InventoryApi,
  StockLevel,
  StockMovement,
} from '../inventory/inventory-api.js';
import { nextTurn, type BetweenReadAndWrite } from '../inventory/race-window.js';

interface MovementRow {
  seq: string;
  tenant: string;
  sku: string;
  delta: number;
  reason: AdjustmentReason;
  reference: string;
  on_hand_after: number;
  created_at: Date;
}

const MOVEMENT_COLUMNS = 'seq, tenant, sku, delta, reason, reference, on_hand_after, created_at';

/**
 * Inventory service backed by `store_stock` and `store_stock_movements`, with the legacy service's
 * unprotected read-modify-write: the level is read in one statement and written back as an absolute
 * value in another, with no lock or transaction around them, so overlapping adjustments of one SKU
 * lose updates (see {@link InventoryApi}). `betweenReadAndWrite` can hold the gap open in tests.
 */
export class PostgresInventory implements InventoryApi {
  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: Clock,
    private readonly betweenReadAndWrite: BetweenReadAndWrite = nextTurn,
  ) {}

  async getStock(tenant: string, sku: string): Promise<StockLevel | undefined> {
    const { rows } = await this.pool.query<StockLevel>(
      'SELECT tenant, sku, name, on_hand FROM store_stock WHERE tenant = $1 AND sku = $2',
      [tenant, sku],
    );
    return rows[0];
  }

  async adjust(request: AdjustRequest): Promise<StockMovement> {
    const read = await this.getStock(request.tenant, request.sku);
    if (read === undefined) throw new DownstreamError(404, 'unknown_sku', 'No such SKU.');
    await this.betweenReadAndWrite(request);
    const after = read.on_hand + request.delta;
    if (after < 0) {
      throw new DownstreamError(409, 'insufficient_stock', 'Not enough stock for this adjustment.', {
        on_hand: read.on_hand,
      });
    }
    await this.pool.query('UPDATE store_stock SET on_hand = $3 WHERE tenant = $1 AND sku = $2', [
      request.tenant,
      request.sku,
      after,
    ]);
    const { rows } = await this.pool.query<MovementRow>(
      `INSERT INTO store_stock_movements (tenant, sku, delta, reason, reference, on_hand_after, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${MOVEMENT_COLUMNS}`,
      [
        request.tenant,
        request.sku,
        request.delta,
        request.reason,
        request.reference,
        after,
        new Date(this.clock.now()),
      ],
    );
    return toMovement(rows[0]!);
  }

  async findMovement(tenant: string, reference: string): Promise<StockMovement | undefined> {
    const { rows } = await this.pool.query<MovementRow>(
      `SELECT ${MOVEMENT_COLUMNS} FROM store_stock_movements
        WHERE tenant = $1 AND reference = $2 ORDER BY seq LIMIT 1`,
      [tenant, reference],
    );
    return rows[0] === undefined ? undefined : toMovement(rows[0]);
  }
}

function toMovement(row: MovementRow): StockMovement {
  return {
    movement_id: `MV-${String(Number(row.seq)).padStart(6, '0')}`,
    tenant: row.tenant,
    sku: row.sku,
    delta: row.delta,
    reason: row.reason,
    reference: row.reference,
    on_hand_after: row.on_hand_after,
    created_at: row.created_at.toISOString(),
  };
}
