import type { Principal } from '../../libs/core/types.js';
import type { HarnessWorld } from '../../libs/testing/fixture-harness.js';
import type { PatternBackends } from '../catalog/pattern-backends.js';
import { buildStoreCatalog, type StoreCatalog } from '../catalog/store-catalog.js';
import { createMemoryDownstreams } from '../downstreams/memory-downstreams.js';
import type { DownstreamName, StoreDownstreams } from '../downstreams/store-downstreams.js';
import { systemClock } from '../../libs/core/system-clock.js';
import type { Clock } from '../../libs/core/clock.js';
import { DEMO_PRINCIPALS } from './principals.js';

/**
 * The operations each fake store service counts (the ones the tools call, each behind the
 * service's fault injector). Listed in full so a fixture's misspelt operation is reported as
 * unknown rather than counted as 0.
 */
export const STORE_OPERATIONS: Readonly<Record<DownstreamName, readonly string[]>> = {
  payments: ['refund', 'findRefund'],
  orders: ['getOrder'],
  inventory: ['getStock', 'adjust', 'findMovement'],
  crm: ['searchCustomers', 'getContact'],
  weather: ['current'],
};

/** How to build the store for a harness; every part defaults as in `createEmbeddedStore`. */
export interface StoreHarnessParts {
  /** The clock of the fake services and pattern backends; pass the harness's clock too. Default: system. */
  readonly clock?: Clock;
  /** Default: fresh in-memory services holding the story's data. */
  readonly downstreams?: StoreDownstreams;
  /** Default: in-memory pattern backends (`memoryPatternBackends`). */
  readonly patterns?: PatternBackends;
}

/** What `createAgentHarness` needs to replay the refund story's fixtures. */
export interface StoreHarnessOptions {
  /** The store catalog over the fake services; closed (with them) when the harness stops. */
  readonly catalog: StoreCatalog;
  /** The story's callers: `ana`, `ben`, `supportDesk`. */
  readonly principals: Readonly<Record<keyof typeof DEMO_PRINCIPALS, Principal>>;
  /** See {@link storeWorld}. */
  readonly world: HarnessWorld;
}

/**
 * The store demo as a harness world: `requestCounts` reads the fault injectors' request counts
 * (`payments.refund`, `orders.getOrder`, ...: every operation of {@link STORE_OPERATIONS}, at 0
 * when never asked), and the one fact, `ledgerRows`, is the number of refund rows the payment
 * ledger holds for an order id in the caller's tenant (the ground truth of money moved).
 */
export function storeWorld(downstreams: StoreDownstreams): HarnessWorld {
  return {
    requestCounts() {
      const counts: Record<string, number> = {};
      for (const [name, operations] of Object.entries(STORE_OPERATIONS)) {
        const injector = downstreams.faults[name as DownstreamName];
        for (const op of operations) counts[`${name}.${op}`] = injector.received(op);
      }
      return counts;
    },
    facts: {
      ledgerRows: async (orderId, principal) =>
        (await downstreams.payments.ledger({ tenant: principal.tenant, order_id: orderId })).length,
    },
  };
}

/**
 * The refund story for `createAgentHarness`: the store catalog over fresh fake services (the same
 * parts `createEmbeddedStore` runs), the story's principals and the store's world. Call it once
 * per harness: the services keep their ledger for as long as they live.
 *
 * ```ts
 * const harness = await createAgentHarness({ ...storeHarnessOptions(), turnTimeoutMs: 5_000 });
 * ```
 */
export function storeHarnessOptions(parts: StoreHarnessParts = {}): StoreHarnessOptions {
  const clock = parts.clock ?? systemClock;
  const downstreams = parts.downstreams ?? createMemoryDownstreams({ clock });
  const catalog = buildStoreCatalog(downstreams, clock, parts.patterns);
  return { catalog, principals: DEMO_PRINCIPALS, world: storeWorld(downstreams) };
}
