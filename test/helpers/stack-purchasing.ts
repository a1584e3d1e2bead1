import type pg from 'pg';
import type { Clock } from '../../libs/core/clock.js';
import type { Principal } from '../../libs/core/types.js';
import { PreviewGate, type PreviewKey } from '../../libs/patterns/preview/index.js';
import type { PolicyEngine } from '../../libs/pipeline/deps.js';
import { createPolicyEngine } from '../../libs/policy/index.js';
import type { SingleUseStore } from '../../libs/ports/single-use-store.js';
import type { ApprovalStore } from '../../libs/ports/approval-store.js';
import type { ToolDefinition } from '../../libs/registry/tool-definition.js';
import { ToolRegistry } from '../../libs/registry/tool-registry.js';
import { STORE_DOWNSTREAM_LIMITS } from '../../services/catalog/index.js';
import type { PurchaseOrderApi } from '../../services/catalog/tools/purchase-order-backend.js';
import {
  ensurePurchaseOrderSchema,
  PostgresPurchaseOrders,
} from '../../services/catalog/tools/purchase-order-postgres.js';
import { purchaseOrderTools } from '../../services/catalog/tools/purchase-order-tools.js';
import { createPostgresDownstreams } from '../../services/downstreams/postgres/postgres-downstreams.js';
import type { StoreDownstreams } from '../../services/downstreams/store-downstreams.js';
import { agentPrincipal } from './principals.js';
import { memoryPipeline, type MemoryPipeline, type MemoryPipelineOptions } from './memory-pipeline.js';

/**
 * The purchasing assistant of tenant `t1` acting for warehouse worker W-1 (role `warehouse`), with
 * the scopes to preview and place purchase orders and to move stock.
 */
export const purchasingAgent: Principal = agentPrincipal(
  'agent:purchasing',
  'W-1',
  ['warehouse'],
  ['purchase_orders:write', 'inventory:write'],
);

export interface PurchasingPartsOptions {
  readonly clock: Clock;
  /** Where the preview gate records spent tokens. */
  readonly singleUse: SingleUseStore;
  /** Where the confirm records approval requests and reads their decisions. */
  readonly approvals: ApprovalStore;
  /** The preview token key; the executors of one scenario share it. */
  readonly key: PreviewKey;
  /** What the tools place orders through; default: the Postgres orders themselves. */
  readonly purchaseOrders?: (orders: PostgresPurchaseOrders) => PurchaseOrderApi;
}

/** What {@link purchasingParts} built on one database. */
export interface PurchasingParts {
  readonly downstreams: StoreDownstreams;
  readonly orders: PostgresPurchaseOrders;
  /** The store's policy (version `store-p1`: the store's rules govern none of these tools). */
  readonly policy: PolicyEngine;
  /** The preview and create purchase-order tools, their gate on `singleUse` with `key`. */
  readonly tools: ToolDefinition[];
}

/**
 * The purchase-order tools as the store catalog runs them, on `pool` (whose search path selects the
 * schema): creates the store downstreams and the purchase-order tables there, then builds the tools
 * over the Postgres orders (or `purchaseOrders` of them), the store policy, and a preview gate.
 */
export async function purchasingParts(
  pool: pg.Pool,
  options: PurchasingPartsOptions,
): Promise<PurchasingParts> {
  const { clock } = options;
  const downstreams = await createPostgresDownstreams(pool, { clock });
  await ensurePurchaseOrderSchema(pool);
  const orders = new PostgresPurchaseOrders(pool, clock);
  const version = 'store-p1';
  const tools = purchaseOrderTools({
    inventory: downstreams.inventory,
    purchaseOrders: options.purchaseOrders?.(orders) ?? orders,
    gate: new PreviewGate({
      key: options.key,
      store: options.singleUse,
      approvals: options.approvals,
      clock,
    }),
    policyVersion: () => version,
  });
  const policy = createPolicyEngine({ version }, tools);
  return { downstreams, orders, policy, tools };
}

export interface PurchasingPipelineOptions {
  readonly clock: Clock;
  /** The lease owner the idempotency store records. */
  readonly owner: string;
  readonly idempotency: MemoryPipelineOptions['idempotency'];
  /** Tools registered before the purchase-order tools (say, the rest of the store catalog). */
  readonly otherTools?: readonly ToolDefinition[];
  readonly settings?: MemoryPipelineOptions['settings'];
}

/**
 * A guard pipeline ({@link memoryPipeline}) running `otherTools` and `parts.tools` under
 * `parts.policy` and the store's downstream limits; the caller shuts its breakers down.
 */
export function purchasingPipeline(
  parts: PurchasingParts,
  options: PurchasingPipelineOptions,
): MemoryPipeline {
  const registry = new ToolRegistry();
  for (const tool of [...(options.otherTools ?? []), ...parts.tools]) registry.register(tool);
  return memoryPipeline({
    clock: options.clock,
    tools: registry,
    policy: parts.policy,
    downstreamLimits: STORE_DOWNSTREAM_LIMITS,
    owner: options.owner,
    idempotency: options.idempotency,
    settings: options.settings,
  });
}
