import type { BucketLimit } from '../../libs/ports/rate-limiter.js';
import type { DownstreamName } from '../downstreams/store-downstreams.js';

/**
 * Outbound budget per downstream: a property of each integration's API contract, shared
 * by every tool and executor calling it. Numbers are the fake services' documented limits; the CRM's
 * are 10/s, burst 20.
 */
export const STORE_DOWNSTREAM_LIMITS: Readonly<Record<DownstreamName, BucketLimit>> = {
  payments: { capacity: 20, refillPerSecond: 10 },
  orders: { capacity: 100, refillPerSecond: 50 },
  inventory: { capacity: 20, refillPerSecond: 10 },
  crm: { capacity: 20, refillPerSecond: 10 },
  weather: { capacity: 10, refillPerSecond: 2 },
};
