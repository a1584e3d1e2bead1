import { MemoryCrm } from './crm/memory-crm.js';
import { MemoryInventory } from './inventory/memory-inventory.js';
import { MemoryOrders } from './orders/memory-orders.js';
import { MemoryPayments } from './payments/memory-payments.js';
import { storeSeed } from './seed-data.js';
import { withFaultInjectors, type DownstreamOptions, type StoreDownstreams } from './store-downstreams.js';
import { MemoryWeather } from './weather/memory-weather.js';

/**
 * The fake store in process memory (embedded mode, unit tests): every service seeded from
 * `options.seed` (default {@link storeSeed}), state lost on exit. `close` does nothing.
 */
export function createMemoryDownstreams(options: DownstreamOptions): StoreDownstreams {
  const seed = options.seed ?? storeSeed();
  return withFaultInjectors(
    {
      payments: new MemoryPayments(seed.charges, options.clock),
      orders: new MemoryOrders(seed.orders),
      inventory: new MemoryInventory(seed.stock, options.clock, options.betweenReadAndWrite),
      crm: new MemoryCrm(seed.customers),
      weather: new MemoryWeather(seed.weather),
    },
    options.clock,
    options.faultSeed ?? 1,
    async () => undefined,
  );
}
