import { z } from 'zod';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { formatDollars } from '../money.js';
import {
  CREATE_PURCHASE_ORDER,
  DEFAULT_APPROVAL_THRESHOLD_CENTS,
  PREVIEW_PURCHASE_ORDER,
  inventoryKey,
  mayPurchase,
  priceOrder,
  purchaseOrderApprovalRule,
  purchaseOrderArgs,
  quoteForModel,
  quoteOutputFields,
  type PurchaseOrderArgs,
  type PurchaseOrderToolDeps,
  PURCHASE_ORDER_DECISIVE_FIELDS,
} from './purchase-order-shared.js';

const output = z.object({
  ...quoteOutputFields,
  on_hand_now: z.number(),
  on_hand_after_delivery: z.number(),
  requires_approval: z.boolean(),
  preview_id: z.string(),
  preview_token: z.string(),
  expires_at: z.string(),
});

export type PreviewPurchaseOrderOutput = z.infer<typeof output>;

/**
 * `preview_purchase_order` (read-only): computes exactly what `create_purchase_order` would place —
 * supplier, priced lines, tax, shipping, total, delivery time, stock now and after delivery — and
 * returns it with a preview token binding the principal, the confirm tool, the canonical arguments,
 * the SKU's stock version, the priced order and the policy version. Nothing is created
 * or stored: previewing twice just gives two tokens.
 *
 * Orders above the approval threshold (default $1,000) come back with `requires_approval: true`:
 * their token cannot be confirmed until a person approves the approval request the confirm records
 * (ops console, Approvals); above the two-approver threshold (default $10,000) two different people.
 *
 * The token is not a credential: it is redeemable only by the same principal, once, for 10 minutes.
 */
export function previewPurchaseOrderTool(
  deps: PurchaseOrderToolDeps,
): ToolDefinition<PurchaseOrderArgs, PreviewPurchaseOrderOutput> {
  const threshold = deps.approvalThresholdCents ?? DEFAULT_APPROVAL_THRESHOLD_CENTS;
  return defineTool({
    name: PREVIEW_PURCHASE_ORDER,
    version: '1.0.0',
    description: `Work out what a purchase order for stock WOULD be — supplier, price per unit, tax, shipping, total, delivery time, stock now and after delivery — without ordering anything. Always call this first and show the user the result; to actually order, call ${CREATE_PURCHASE_ORDER} with the returned preview_token and the same sku, quantity and supplier_id. Orders above ${formatDollars(threshold)} need a manager's approval before they can be placed (requires_approval). Not for stock corrections (use update_inventory).`,
    input: purchaseOrderArgs,
    output,
    scopes: ['purchase_orders:write'],
    owner: 'purchasing-team',
    stateChanging: false,
    authorize: (principal) => mayPurchase(principal),
    conflictKey: (args, ctx) => inventoryKey(ctx.tenant, args.sku),
    downstream: 'purchasing',
    timeoutMs: 3_000,
    retry: { maxAttempts: 2, baseDelayMs: 200, maxDelayMs: 1_000 },
    auditFields: PURCHASE_ORDER_DECISIVE_FIELDS,
    decisiveFields: PURCHASE_ORDER_DECISIVE_FIELDS,
    cost: { tokensIn: 60, tokensOut: 260 },
    execute: async (args, inv) => {
      const priced = await priceOrder(deps, inv.ctx.tenant, args, inv.signal);
      const approvalRule = purchaseOrderApprovalRule(priced.quote.total_cents, deps);
      const requireApproval = approvalRule !== undefined;
      const issued = await deps.gate.issue({
        principal: inv.ctx.principal,
        tool: CREATE_PURCHASE_ORDER,
        arguments: args,
        resourceKey: inventoryKey(inv.ctx.tenant, args.sku),
        resourceVersion: priced.version,
        policyVersion: deps.policyVersion(),
        preview: priced.quote,
        ...(approvalRule === undefined ? {} : { approvalRule }),
      });
      return {
        ...quoteForModel(priced.quote),
        on_hand_now: priced.stock.on_hand,
        on_hand_after_delivery: priced.stock.on_hand + args.quantity,
        requires_approval: requireApproval,
        preview_id: issued.claims.jti,
        preview_token: issued.token,
        expires_at: new Date(issued.claims.expiresAtMs).toISOString(),
      };
    },
  });
}
