import { z } from 'zod';
import { canonicalJson, sha256Hex } from '../../../libs/core/canonical-json.js';
import { ToolgateError } from '../../../libs/core/errors.js';
import type { Principal } from '../../../libs/core/types.js';
import type { PreviewGate } from '../../../libs/patterns/preview/preview-gate.js';
import type { ApprovalRule } from '../../../libs/ports/approval-store.js';
import type { InventoryApi, StockLevel } from '../../downstreams/inventory/inventory-api.js';
import { centsToDollars } from '../money.js';
import { hasRole } from '../principal-facts.js';
import { skuField } from './fields.js';
import {
  quotePurchaseOrder,
  type PurchaseOrderApi,
  type PurchaseOrderQuote,
} from './purchase-order-backend.js';

export const PREVIEW_PURCHASE_ORDER = 'preview_purchase_order';
export const CREATE_PURCHASE_ORDER = 'create_purchase_order';

/** Roles that may order stock from suppliers. */
export const PURCHASING_ROLES: readonly string[] = ['warehouse', 'purchasing', 'manager'];

/** Orders whose total is above this need a person's approval before they can be confirmed ($1,000). */
export const DEFAULT_APPROVAL_THRESHOLD_CENTS = 100_000;

/** Orders whose total is above this need the approval of two different people ($10,000). */
export const DEFAULT_TWO_APPROVER_THRESHOLD_CENTS = 1_000_000;

/** What both purchase-order tools need. */
export interface PurchaseOrderToolDeps {
  readonly inventory: InventoryApi;
  readonly purchaseOrders: PurchaseOrderApi;
  /** Signs, redeems and gates preview tokens (server key, single-use store, clock). */
  readonly gate: PreviewGate;
  /** The business-rule version in force (`PolicyEngine.version`); tokens bind it. */
  readonly policyVersion: () => string;
  /** Default {@link DEFAULT_APPROVAL_THRESHOLD_CENTS}. */
  readonly approvalThresholdCents?: number;
  /** Default {@link DEFAULT_TWO_APPROVER_THRESHOLD_CENTS}. */
  readonly twoApproverThresholdCents?: number;
}

/** `$9,300` or `$1,123.20`: an amount as the approver reads it (cents only when there are any). */
function usd(cents: number): string {
  const digits = cents % 100 === 0 ? 0 : 2;
  return (cents / 100).toLocaleString('en-US', {
    style: 'currency',
    currency: 'USD',
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
}

/**
 * The approval an order of `totalCents` needs, or undefined when none: above the approval threshold
 * one person, above the two-approver threshold two different people. The reason names the rule and
 * the order's total, for the approver. Pure.
 */
export function purchaseOrderApprovalRule(
  totalCents: number,
  deps: Pick<PurchaseOrderToolDeps, 'approvalThresholdCents' | 'twoApproverThresholdCents'>,
): ApprovalRule | undefined {
  const one = deps.approvalThresholdCents ?? DEFAULT_APPROVAL_THRESHOLD_CENTS;
  const two = deps.twoApproverThresholdCents ?? DEFAULT_TWO_APPROVER_THRESHOLD_CENTS;
  const total = `this order totals ${usd(totalCents)}`;
  if (totalCents > two) {
    return {
      rule: 'purchase-order-total',
      reason: `orders above ${usd(two)} need the approval of two different people; ${total}`,
      approvers: 2,
    };
  }
  if (totalCents > one) {
    return {
      rule: 'purchase-order-total',
      reason: `orders above ${usd(one)} need a manager's approval; ${total}`,
      approvers: 1,
    };
  }
  return undefined;
}

/** The order as both tools take it: what the preview prices is exactly what the create places. */
export const purchaseOrderArgs = z.strictObject({
  sku: skuField,
  quantity: z
    .int()
    .min(1)
    .max(1_000)
    .describe('Units to order: a whole number from 1 to 1000, as the user asked for.'),
  supplier_id: z
    .string()
    .regex(/^SUP-\d{1,6}$/)
    .describe("The supplier to order from: 'SUP-' then digits, e.g. 'SUP-1', as the user named it."),
});

export type PurchaseOrderArgs = z.infer<typeof purchaseOrderArgs>;

/**
 * What decides a purchase order — what is bought, how many, from whom: shown first and in full
 * whenever a person is asked about a preview or an order, and the audit allow-list of both tools.
 */
export const PURCHASE_ORDER_DECISIVE_FIELDS = ['sku', 'quantity', 'supplier_id'] as const;

/** The resource a purchase order is about; the same key as every other write to that SKU's stock. */
export function inventoryKey(tenant: string, sku: string): string {
  return `${tenant}:inventory:${sku}`;
}

/**
 * The version of one SKU's stock record: a content hash of what the inventory service returns for
 * it. The inventory service keeps no version counter, so equal content is an equal version (a change
 * that was later undone reads as unchanged — the preview then still shows the truth).
 */
export function stockVersion(level: StockLevel): string {
  return sha256Hex(canonicalJson({ sku: level.sku, name: level.name, on_hand: level.on_hand })).slice(0, 32);
}

/** Whether the principal holds one of {@link PURCHASING_ROLES}. Read from the verified principal only. */
export function mayPurchase(principal: Principal): boolean {
  return PURCHASING_ROLES.some((role) => hasRole(principal, role));
}

/** The stock record, its version and the priced order, as of now. */
export interface PricedOrder {
  readonly stock: StockLevel;
  readonly version: string;
  readonly quote: PurchaseOrderQuote;
}

/**
 * Reads the SKU's stock and the supplier's price list and prices the order. Read-only. Throws
 * CALLER_ERROR (nothing applied, model-readable) for an unknown SKU or supplier, or a supplier that
 * does not sell the SKU; rethrows service failures for the pipeline to classify.
 */
export async function priceOrder(
  deps: PurchaseOrderToolDeps,
  tenant: string,
  args: PurchaseOrderArgs,
  signal: AbortSignal,
): Promise<PricedOrder> {
  const [stock, supplier] = await Promise.all([
    deps.inventory.getStock(tenant, args.sku, signal),
    deps.purchaseOrders.supplier(tenant, args.supplier_id, signal),
  ]);
  if (stock === undefined) {
    throw new ToolgateError('CALLER_ERROR', `There is no SKU ${args.sku}.`, {
      suggestedFix: 'Use a SKU exactly as an order line or the user gave it.',
    });
  }
  if (supplier === undefined) {
    throw new ToolgateError('CALLER_ERROR', `There is no supplier ${args.supplier_id}.`, {
      suggestedFix: 'Ask the user which supplier to order from.',
    });
  }
  const quote = quotePurchaseOrder(supplier, stock, args.quantity);
  if (quote === undefined) {
    throw new ToolgateError(
      'CALLER_ERROR',
      `${supplier.name} (${args.supplier_id}) does not sell ${args.sku}.`,
      {
        suggestedFix: 'Ask the user for another supplier.',
      },
    );
  }
  return { stock, version: stockVersion(stock), quote };
}

/** The quote in dollars, as the model and the user read it. */
export function quoteForModel(quote: PurchaseOrderQuote) {
  return {
    supplier_id: quote.supplier_id,
    supplier_name: quote.supplier_name,
    currency: quote.currency,
    lines: quote.lines.map((l) => ({
      sku: l.sku,
      name: l.name,
      quantity: l.quantity,
      unit_cost: centsToDollars(l.unit_cost_cents),
      line_total: centsToDollars(l.line_total_cents),
    })),
    subtotal: centsToDollars(quote.subtotal_cents),
    tax: centsToDollars(quote.tax_cents),
    shipping: centsToDollars(quote.shipping_cents),
    total: centsToDollars(quote.total_cents),
    delivery_in_days: quote.lead_days,
  };
}

/** The output shape of {@link quoteForModel}, for the tools' output schemas. */
export const quoteOutputFields = {
  supplier_id: z.string(),
  supplier_name: z.string(),
  currency: z.literal('USD'),
  lines: z.array(
    z.object({
      sku: z.string(),
      name: z.string(),
      quantity: z.number(),
      unit_cost: z.number(),
      line_total: z.number(),
    }),
  ),
  subtotal: z.number(),
  tax: z.number(),
  shipping: z.number(),
  total: z.number(),
  delivery_in_days: z.number(),
};
