import { z } from 'zod';
import { previewRefusalError } from '../../../libs/patterns/preview/preview-refusal-error.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { callDownstream } from '../downstream-failure.js';
import type { PurchaseOrder, PurchaseOrderQuote } from './purchase-order-backend.js';
import {
  CREATE_PURCHASE_ORDER,
  PREVIEW_PURCHASE_ORDER,
  inventoryKey,
  mayPurchase,
  priceOrder,
  purchaseOrderArgs,
  quoteForModel,
  quoteOutputFields,
  type PurchaseOrderToolDeps,
  PURCHASE_ORDER_DECISIVE_FIELDS,
} from './purchase-order-shared.js';

const input = purchaseOrderArgs.extend({
  preview_token: z
    .string()
    .min(1)
    .max(4_096)
    .describe(
      `The preview_token returned by ${PREVIEW_PURCHASE_ORDER} for exactly this sku, quantity and supplier_id, copied unchanged. Single use, valid 10 minutes.`,
    ),
});

const output = z.object({
  ...quoteOutputFields,
  po_id: z.string(),
  status: z.literal('placed'),
  approved_by: z.string().nullable(),
  created_at: z.string(),
});

export type CreatePurchaseOrderInput = z.infer<typeof input>;
export type CreatePurchaseOrderOutput = z.infer<typeof output>;

function toOutput(order: PurchaseOrder): CreatePurchaseOrderOutput {
  return {
    ...quoteForModel(order),
    po_id: order.po_id,
    status: 'placed',
    approved_by: order.approved_by,
    created_at: order.created_at,
  };
}

/** The create tool's version, as it registers and as its approval requests record it. */
const CREATE_PURCHASE_ORDER_VERSION = '1.0.0';

/**
 * `create_purchase_order` (state-changing): places the order a `preview_purchase_order` call priced,
 * and only that. It accepts only the preview token plus the previewed arguments, and redeems the
 * token through the PreviewGate before anything happens: refused (nothing placed) when the token was
 * tampered with or issued elsewhere, expired (the message says when), issued to another principal,
 * for other arguments, awaiting approval, already used by another call (a replay is not re-executed),
 * or when the stock record, the supplier's price or the policy version changed since the preview.
 *
 * The conflict key is the SKU's inventory key, the same as update_inventory's, so the confirm runs
 * in order with every other write to that stock. The purchasing service deduplicates on the
 * reference (toolgate's idempotency key) and a retry of the same call passes the single-use check
 * (same holder), so retry safety is `forwards-key`.
 */
export function createPurchaseOrderTool(
  deps: PurchaseOrderToolDeps,
): ToolDefinition<CreatePurchaseOrderInput, CreatePurchaseOrderOutput> {
  return defineTool({
    name: CREATE_PURCHASE_ORDER,
    version: CREATE_PURCHASE_ORDER_VERSION,
    description: `Place a purchase order that ${PREVIEW_PURCHASE_ORDER} priced and the user agreed to. Pass the preview_token from that preview together with the same sku, quantity and supplier_id; nothing else is accepted. The token works once and for 10 minutes; if it expired, or the stock or prices changed, preview again and show the user the new numbers. If the preview said requires_approval, this waits for a manager's approval.`,
    input,
    output,
    scopes: ['purchase_orders:write'],
    owner: 'purchasing-team',
    stateChanging: true,
    destructive: true,
    authorize: (principal) => mayPurchase(principal),
    conflictKey: (args, ctx) => inventoryKey(ctx.tenant, args.sku),
    retrySafety: { kind: 'forwards-key' },
    downstream: 'purchasing',
    timeoutMs: 5_000,
    retry: { maxAttempts: 2, baseDelayMs: 200, maxDelayMs: 1_000 },
    auditFields: PURCHASE_ORDER_DECISIVE_FIELDS,
    decisiveFields: PURCHASE_ORDER_DECISIVE_FIELDS,
    cost: { tokensIn: 320, tokensOut: 220 },
    execute: async ({ preview_token, ...args }, inv) => {
      const tenant = inv.ctx.tenant;
      let quote: PurchaseOrderQuote | undefined;
      const confirmation = await deps.gate.confirm({
        token: preview_token,
        principal: inv.ctx.principal,
        tool: CREATE_PURCHASE_ORDER,
        arguments: args,
        resourceKey: inventoryKey(tenant, args.sku),
        policyVersion: deps.policyVersion(),
        holder: inv.idempotencyKey,
        toolVersion: CREATE_PURCHASE_ORDER_VERSION,
        origin: {
          traceId: inv.ctx.traceId,
          taskId: inv.ctx.taskId,
          step: inv.ctx.step,
          index: inv.ctx.index,
          idempotencyKey: inv.idempotencyKey,
          resourceKey: inventoryKey(tenant, args.sku),
        },
        current: async () => {
          const priced = await priceOrder(deps, tenant, args, inv.signal);
          quote = priced.quote;
          return { resourceVersion: priced.version, preview: priced.quote };
        },
      });
      if (!confirmation.ok) {
        throw previewRefusalError(confirmation.refusal, { previewTool: PREVIEW_PURCHASE_ORDER });
      }
      if (quote === undefined) throw new Error('confirmed without reading the current order');
      const confirmed = quote;
      const order = await callDownstream(() =>
        deps.purchaseOrders.create(
          {
            tenant,
            reference: inv.idempotencyKey,
            quote: confirmed,
            requested_by: inv.ctx.principal.id,
            approved_by:
              confirmation.approval === undefined
                ? null
                : confirmation.approval.approvals.map((a) => a.by).join(', '),
          },
          inv.signal,
        ),
      );
      return toOutput(order);
    },
  });
}
