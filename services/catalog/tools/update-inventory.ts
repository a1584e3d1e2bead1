import { z } from 'zod';
import type { Principal } from '../../../libs/core/types.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type {
  StatusCheckAnswer,
  ToolDefinition,
  ToolInvocation,
} from '../../../libs/registry/tool-definition.js';
import {
  ADJUSTMENT_REASONS,
  type InventoryApi,
  type StockMovement,
} from '../../downstreams/inventory/inventory-api.js';
import { callDownstream } from '../downstream-failure.js';
import { hasRole, SUPPORT_ROLE } from '../principal-facts.js';
import { skuField } from './fields.js';

/** Roles allowed to move stock. */
export const INVENTORY_ROLES = [SUPPORT_ROLE, 'warehouse'] as const;

const input = z.strictObject({
  sku: skuField,
  delta: z
    .int()
    .min(-500)
    .max(500)
    .refine((n) => n !== 0, 'must not be 0')
    .describe(
      'Units to add (positive, e.g. 3 for returned items put back on the shelf) or remove (negative, e.g. -1 for a damaged unit). Whole number between -500 and 500, never 0. Support may change one SKU by at most 20 units a day in total.',
    ),
  reason: z
    .enum(ADJUSTMENT_REASONS)
    .describe("Why stock changes: 'received', 'returned', 'damaged' or 'recount'."),
});

const output = z.object({ sku: z.string(), on_hand: z.number(), movement_id: z.string() });

export type UpdateInventoryInput = z.infer<typeof input>;
export type UpdateInventoryOutput = z.infer<typeof output>;

function toOutput(movement: StockMovement): UpdateInventoryOutput {
  return { sku: movement.sku, on_hand: movement.on_hand_after, movement_id: movement.movement_id };
}

/**
 * `update_inventory` (state-changing): adjusts one SKU's stock by a delta.
 *
 * The inventory service is a read-modify-write without locking, so two adjustments of one SKU must
 * never overlap: the conflict key `<tenant>:inventory:<sku>` makes toolgate run them one at a time,
 * in order, while other SKUs proceed in parallel. The service does not deduplicate, but it records
 * the reference (toolgate's idempotency key) with each movement, so retry safety is `status-check`:
 * the executor looks the movement up before sending and after an unknown outcome, before any retry.
 */
export function updateInventoryTool(deps: {
  readonly inventory: InventoryApi;
}): ToolDefinition<UpdateInventoryInput, UpdateInventoryOutput> {
  const check = async (_args: UpdateInventoryInput, inv: ToolInvocation): Promise<StatusCheckAnswer> => {
    const movement = await deps.inventory.findMovement(inv.ctx.tenant, inv.idempotencyKey, inv.signal);
    return movement === undefined
      ? { state: 'not-applied' }
      : { state: 'applied', result: toOutput(movement) };
  };
  const apply = async (args: UpdateInventoryInput, inv: ToolInvocation): Promise<UpdateInventoryOutput> => {
    const movement = await callDownstream(
      () =>
        deps.inventory.adjust(
          {
            tenant: inv.ctx.tenant,
            sku: args.sku,
            delta: args.delta,
            reason: args.reason,
            reference: inv.idempotencyKey,
          },
          inv.signal,
        ),
      (reason, details) => {
        if (reason === 'unknown_sku') {
          return { message: `There is no SKU ${args.sku}.`, suggestedFix: 'Use a SKU from lookup_order.' };
        }
        if (reason === 'insufficient_stock') {
          return {
            message: `Only ${String(details.on_hand ?? 0)} units of ${args.sku} are in stock; removing ${-args.delta} would go below zero.`,
            suggestedFix: 'Remove at most the units on hand, or ask for a recount.',
          };
        }
        return undefined;
      },
    );
    return toOutput(movement);
  };
  return defineTool({
    name: 'update_inventory',
    version: '1.0.0',
    description:
      "Correct the stock count of one SKU: add units that came back or arrived, remove damaged ones, or apply a recount. Use it only for physical stock changes a person reported; refunds and orders do NOT change stock by themselves, so don't call it after issue_refund unless the item was physically returned. To read an order's items use lookup_order.",
    input,
    output,
    scopes: ['inventory:write'],
    owner: 'warehouse-team',
    stateChanging: true,
    authorize: (principal: Principal) => INVENTORY_ROLES.some((role) => hasRole(principal, role)),
    conflictKey: (args, ctx) => `${ctx.tenant}:inventory:${args.sku}`,
    // A request the service is still working on when its caller gives up ends within its 2 s limit:
    // "no such movement" is believed only after that.
    retrySafety: { kind: 'status-check', check, apply, settleMs: 2_000 },
    downstream: 'inventory',
    timeoutMs: 2_000,
    retry: { maxAttempts: 2, baseDelayMs: 200, maxDelayMs: 1_000 },
    auditFields: ['sku', 'delta', 'reason'],
    // Which stock moves, and by how much.
    decisiveFields: ['sku', 'delta'],
    rateLimit: { capacity: 20, refillPerSecond: 2, per: ['principal'] },
    cost: { tokensIn: 80, tokensOut: 40 },
  });
}
