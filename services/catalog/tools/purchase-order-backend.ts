import type { Clock } from '../../../libs/core/clock.js';
import { DownstreamError } from '../../downstreams/downstream-error.js';

/** A supplier the store buys stock from, with its price list. Prices in integer cents. */
export interface Supplier {
  readonly tenant: string;
  readonly supplier_id: string;
  readonly name: string;
  /** Unit cost per SKU; a SKU not listed is not sold by this supplier. */
  readonly prices: Readonly<Record<string, number>>;
  /** Purchase tax in basis points (825 = 8.25 %). */
  readonly tax_rate_bp: number;
  /** Flat shipping charged below {@link Supplier.free_shipping_from_cents}. */
  readonly shipping_cents: number;
  readonly free_shipping_from_cents: number;
  readonly lead_days: number;
}

/** One priced line of a purchase order. */
export interface PurchaseOrderLine {
  readonly sku: string;
  readonly name: string;
  readonly quantity: number;
  readonly unit_cost_cents: number;
  readonly line_total_cents: number;
}

/** What a purchase order costs, computed from a supplier's price list: the part a person approves. */
export interface PurchaseOrderQuote {
  readonly supplier_id: string;
  readonly supplier_name: string;
  readonly currency: 'USD';
  readonly lines: readonly PurchaseOrderLine[];
  readonly subtotal_cents: number;
  readonly tax_cents: number;
  readonly shipping_cents: number;
  readonly total_cents: number;
  readonly lead_days: number;
}

/** A placed purchase order, as the purchasing service records it. */
export interface PurchaseOrder extends PurchaseOrderQuote {
  readonly po_id: string;
  readonly tenant: string;
  /** The caller's reference (toolgate's idempotency key): the service deduplicates on it. */
  readonly reference: string;
  /** Who asked (the principal id) and who approved, when approval was needed. */
  readonly requested_by: string;
  readonly approved_by: string | null;
  /** ISO 8601, UTC. */
  readonly created_at: string;
}

export interface CreatePurchaseOrderRequest {
  readonly tenant: string;
  readonly reference: string;
  readonly quote: PurchaseOrderQuote;
  readonly requested_by: string;
  readonly approved_by: string | null;
}

/**
 * The purchasing service. `create` deduplicates on (tenant, reference): a reference already used
 * returns the ORIGINAL order and places nothing, so a retry with the same reference is safe; it
 * refuses 400 `empty_order` for an order without lines. `findByReference` is its status query;
 * `list` is the operator's view of a tenant's orders, oldest first.
 */
export interface PurchaseOrderApi {
  supplier(tenant: string, supplierId: string, signal?: AbortSignal): Promise<Supplier | undefined>;
  create(request: CreatePurchaseOrderRequest, signal?: AbortSignal): Promise<PurchaseOrder>;
  findByReference(
    tenant: string,
    reference: string,
    signal?: AbortSignal,
  ): Promise<PurchaseOrder | undefined>;
  list(tenant: string): Promise<PurchaseOrder[]>;
}

/** The seed suppliers of tenant t1 (SKUs from the store seed) and t2. */
export function seedSuppliers(): Supplier[] {
  return [
    {
      tenant: 't1',
      supplier_id: 'SUP-1',
      name: 'Kitchen Wholesale Co.',
      prices: { 'SKU-3': 610, 'SKU-7': 2_600, 'SKU-12': 1_750 },
      tax_rate_bp: 800,
      shipping_cents: 2_500,
      free_shipping_from_cents: 50_000,
      lead_days: 5,
    },
    {
      tenant: 't1',
      supplier_id: 'SUP-2',
      name: 'Brew Parts Ltd.',
      prices: { 'SKU-21': 31_000, 'SKU-3': 585 },
      tax_rate_bp: 825,
      shipping_cents: 4_000,
      free_shipping_from_cents: 100_000,
      lead_days: 12,
    },
    {
      tenant: 't2',
      supplier_id: 'SUP-1',
      name: 'Refurb Depot',
      prices: { 'SKU-7': 1_100 },
      tax_rate_bp: 700,
      shipping_cents: 1_500,
      free_shipping_from_cents: 30_000,
      lead_days: 8,
    },
  ];
}

/**
 * Prices `quantity` units of one SKU at `supplier`: one goods line, tax on the subtotal (rounded half
 * up to the cent), flat shipping below the free-shipping threshold. Pure: the same inputs always
 * give the same quote, which is what lets a confirm recompute it and compare with the preview.
 * Returns undefined when the supplier does not sell the SKU.
 */
export function quotePurchaseOrder(
  supplier: Supplier,
  item: { readonly sku: string; readonly name: string },
  quantity: number,
): PurchaseOrderQuote | undefined {
  const unit = supplier.prices[item.sku];
  if (unit === undefined) return undefined;
  const subtotal = unit * quantity;
  const tax = Math.round((subtotal * supplier.tax_rate_bp) / 10_000);
  const shipping = subtotal >= supplier.free_shipping_from_cents ? 0 : supplier.shipping_cents;
  return {
    supplier_id: supplier.supplier_id,
    supplier_name: supplier.name,
    currency: 'USD',
    lines: [{ sku: item.sku, name: item.name, quantity, unit_cost_cents: unit, line_total_cents: subtotal }],
    subtotal_cents: subtotal,
    tax_cents: tax,
    shipping_cents: shipping,
    total_cents: subtotal + tax + shipping,
    lead_days: supplier.lead_days,
  };
}

/** The purchasing service in process memory (embedded mode, unit tests). See {@link PurchaseOrderApi}. */
export class MemoryPurchaseOrders implements PurchaseOrderApi {
  readonly #suppliers: Supplier[];
  readonly #orders: PurchaseOrder[] = [];

  constructor(
    private readonly clock: Clock,
    suppliers: readonly Supplier[] = seedSuppliers(),
  ) {
    this.#suppliers = suppliers.map((s) => ({ ...s, prices: { ...s.prices } }));
  }

  async supplier(tenant: string, supplierId: string): Promise<Supplier | undefined> {
    const found = this.#suppliers.find((s) => s.tenant === tenant && s.supplier_id === supplierId);
    return found === undefined ? undefined : { ...found, prices: { ...found.prices } };
  }

  async create(request: CreatePurchaseOrderRequest): Promise<PurchaseOrder> {
    const existing = await this.findByReference(request.tenant, request.reference);
    if (existing !== undefined) return existing;
    if (request.quote.lines.length === 0) throw new DownstreamError(400, 'empty_order', 'No lines.');
    const order: PurchaseOrder = {
      ...request.quote,
      lines: request.quote.lines.map((l) => ({ ...l })),
      po_id: `PO-${String(this.#orders.length + 1).padStart(6, '0')}`,
      tenant: request.tenant,
      reference: request.reference,
      requested_by: request.requested_by,
      approved_by: request.approved_by,
      created_at: new Date(this.clock.now()).toISOString(),
    };
    this.#orders.push(order);
    return structuredClone(order);
  }

  async findByReference(tenant: string, reference: string): Promise<PurchaseOrder | undefined> {
    const found = this.#orders.find((o) => o.tenant === tenant && o.reference === reference);
    return found === undefined ? undefined : structuredClone(found);
  }

  async list(tenant: string): Promise<PurchaseOrder[]> {
    return this.#orders.filter((o) => o.tenant === tenant).map((o) => structuredClone(o));
  }

  /** Changes a supplier's unit price (tests: a price that moves between preview and confirm). */
  setPrice(tenant: string, supplierId: string, sku: string, unitCostCents: number): void {
    const found = this.#suppliers.find((s) => s.tenant === tenant && s.supplier_id === supplierId);
    if (found === undefined) throw new Error(`no supplier ${supplierId} in ${tenant}`);
    const index = this.#suppliers.indexOf(found);
    this.#suppliers[index] = { ...found, prices: { ...found.prices, [sku]: unitCostCents } };
  }
}
