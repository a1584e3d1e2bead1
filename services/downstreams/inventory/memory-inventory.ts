import type { Clock } from '../../../libs/core/clock.js';
import { DownstreamError } from '../downstream-error.js';
import type { AdjustRequest, InventoryApi, StockLevel, StockMovement } from './inventory-api.js';
import { nextTurn, type BetweenReadAndWrite } from './race-window.js';

/**
 * In-process inventory service with the same unprotected read-modify-write as the real one: `adjust`
 * reads the level, awaits `betweenReadAndWrite` (by default one event-loop turn, the round trip a
 * real service makes between its read and its write), then writes `read + delta`. Two adjustments
 * of one SKU started together therefore lose an update, deterministically. See {@link InventoryApi}.
 */
export class MemoryInventory implements InventoryApi {
  readonly #clock: Clock;
  readonly #stock = new Map<string, StockLevel>();
  readonly #movements: StockMovement[] = [];
  readonly #betweenReadAndWrite: BetweenReadAndWrite;

  constructor(
    stock: readonly StockLevel[],
    clock: Clock,
    betweenReadAndWrite: BetweenReadAndWrite = nextTurn,
  ) {
    this.#clock = clock;
    this.#betweenReadAndWrite = betweenReadAndWrite;
    for (const s of stock) this.#stock.set(skuKey(s.tenant, s.sku), { ...s });
  }

  async getStock(tenant: string, sku: string): Promise<StockLevel | undefined> {
    const level = this.#stock.get(skuKey(tenant, sku));
    return level === undefined ? undefined : { ...level };
  }

  async adjust(request: AdjustRequest): Promise<StockMovement> {
    const key = skuKey(request.tenant, request.sku);
    const read = this.#stock.get(key);
    if (read === undefined) throw new DownstreamError(404, 'unknown_sku', 'No such SKU.');
    const onHand = read.on_hand;
    await this.#betweenReadAndWrite(request);
    const after = onHand + request.delta;
    if (after < 0) {
      throw new DownstreamError(409, 'insufficient_stock', 'Not enough stock for this adjustment.', {
        on_hand: onHand,
      });
    }
    this.#stock.set(key, { ...read, on_hand: after });
    const movement: StockMovement = {
      movement_id: `MV-${String(this.#movements.length + 1).padStart(6, '0')}`,
      tenant: request.tenant,
      sku: request.sku,
      delta: request.delta,
      reason: request.reason,
      reference: request.reference,
      on_hand_after: after,
      created_at: new Date(this.#clock.now()).toISOString(),
    };
    this.#movements.push(movement);
    return { ...movement };
  }

  async findMovement(tenant: string, reference: string): Promise<StockMovement | undefined> {
    const found = this.#movements.find((m) => m.tenant === tenant && m.reference === reference);
    return found === undefined ? undefined : { ...found };
  }
}

const skuKey = (tenant: string, sku: string): string => `${tenant}\u0000${sku}`;
