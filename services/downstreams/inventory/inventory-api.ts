/** Why stock changes. */
export const ADJUSTMENT_REASONS = ['received', 'returned', 'damaged', 'recount'] as const;
export type AdjustmentReason = (typeof ADJUSTMENT_REASONS)[number];

export interface StockLevel {
  readonly tenant: string;
  readonly sku: string;
  readonly name: string;
  readonly on_hand: number;
}

export interface AdjustRequest {
  readonly tenant: string;
  readonly sku: string;
  /** Units added (positive) or removed (negative). */
  readonly delta: number;
  readonly reason: AdjustmentReason;
  /** Caller's reference, stored with the movement so a status check can find it. Not deduplicated. */
  readonly reference: string;
}

/** One stock movement as recorded by the inventory service. */
export interface StockMovement {
  readonly movement_id: string;
  readonly tenant: string;
  readonly sku: string;
  readonly delta: number;
  readonly reason: AdjustmentReason;
  readonly reference: string;
  readonly on_hand_after: number;
  /** ISO 8601, UTC. */
  readonly created_at: string;
}

/**
 * A legacy inventory service. `adjust` is a read-modify-write without locking: it reads the level,
 * then writes `read + delta`, so two concurrent adjustments of one SKU can lose one of the updates.
 * Nothing in the service prevents that; callers must serialize per SKU (toolgate does, by the
 * tool's conflict key). It does not deduplicate either: the same reference sent twice moves stock
 * twice. It refuses 404 `unknown_sku` and 409 `insufficient_stock` (the level would go negative),
 * applying nothing.
 *
 * `findMovement` is its status query: the movement recorded under a reference, if any (the first).
 */
export interface InventoryApi {
  getStock(tenant: string, sku: string, signal?: AbortSignal): Promise<StockLevel | undefined>;
  adjust(request: AdjustRequest, signal?: AbortSignal): Promise<StockMovement>;
  findMovement(tenant: string, reference: string, signal?: AbortSignal): Promise<StockMovement | undefined>;
}
