import { expect } from 'vitest';
import type { IdempotencyStore } from '../../../libs/ports/idempotency-store.js';
import { uniqueName } from '../../helpers/names.js';

/**
 * Claims a fresh key for 10 s between two readings of the store server's clock (`serverNowMs`) and
 * expects the claim, with a lease ending 10 s after a moment between the readings: at most
 * `roundingMs` before the first (for a server whose clock the store rounds down) and never after
 * the second.
 */
export async function expectLeaseFromServerClock(
  store: IdempotencyStore,
  serverNowMs: () => Promise<number>,
  roundingMs = 0,
): Promise<void> {
  const before = await serverNowMs();
  const claim = await store.claim(uniqueName('k'), 'fp', 'a', 10_000);
  const after = await serverNowMs();
  expect(claim.kind).toBe('claimed');
  if (claim.kind !== 'claimed') return;
  expect(claim.leaseExpiresAtMs).toBeGreaterThanOrEqual(before + 10_000 - roundingMs);
  expect(claim.leaseExpiresAtMs).toBeLessThanOrEqual(after + 10_000);
}
