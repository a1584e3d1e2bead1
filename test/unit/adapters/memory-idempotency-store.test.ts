import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { MemoryIdempotencyStore } from '../../../libs/adapters/memory/index.js';
import type { StoredResult } from '../../../libs/ports/idempotency-store.js';

const T0 = 1_700_000_000_000;

function setup(abandonedRetentionMs = 10_000): { clock: ManualClock; store: MemoryIdempotencyStore } {
  const clock = new ManualClock(T0);
  return { clock, store: new MemoryIdempotencyStore(clock, { abandonedRetentionMs }) };
}

describe('MemoryIdempotencyStore (exact times on a manual clock)', () => {
  it('leases for exactly leaseMs and treats the lease as lapsed from its expiry instant on', async () => {
    const { clock, store } = setup();
    expect(await store.claim('k', 'fp', 'a', 1000)).toEqual({ kind: 'claimed', leaseExpiresAtMs: T0 + 1000 });
    await clock.advance(999);
    expect(await store.claim('k', 'fp', 'b', 1000)).toEqual({
      kind: 'in-flight',
      owner: 'a',
      leaseExpiresAtMs: T0 + 1000,
    });
    await clock.advance(1);
    expect(await store.claim('k', 'fp', 'b', 500)).toEqual({
      kind: 'taken-over',
      previousOwner: 'a',
      leaseExpiresAtMs: T0 + 1500,
    });
  });

  it('rounds a fractional lease up to a whole millisecond, as the Redis and Postgres stores must', async () => {
    const { store } = setup();
    expect(await store.claim('k', 'fp', 'a', 0.2)).toEqual({ kind: 'claimed', leaseExpiresAtMs: T0 + 1 });
  });

  it('keeps a completed record for exactly ttlMs', async () => {
    const { clock, store } = setup();
    const stored: StoredResult = { outcome: 'SUCCESS', result: 1, completedAtMs: T0 };
    await store.claim('k', 'fp', 'a', 1000);
    expect(await store.complete('k', 'a', stored, 5000)).toBe(true);
    await clock.advance(4999);
    expect(await store.claim('k', 'fp', 'b', 1000)).toEqual({ kind: 'completed', stored });
    await clock.advance(1);
    expect(await store.claim('k', 'fp', 'b', 1000)).toEqual({ kind: 'claimed', leaseExpiresAtMs: T0 + 6000 });
  });

  it('keeps an abandoned marker for lease + retention, then forgets it', async () => {
    const { clock, store } = setup(10_000);
    await store.claim('k', 'fp', 'a', 1000);
    await clock.advance(1000 + 9999);
    expect((await store.claim('k', 'fp', 'b', 1000)).kind).toBe('taken-over');
    await clock.advance(1000 + 10_000);
    expect((await store.claim('k', 'fp', 'c', 1000)).kind).toBe('claimed');
  });

  it('stores a JSON copy: mutating the caller object afterwards changes nothing', async () => {
    const { store } = setup();
    const payload = { items: [1, 2], when: new Date(T0) };
    await store.claim('k', 'fp', 'a', 1000);
    await store.complete('k', 'a', { outcome: 'SUCCESS', result: payload, completedAtMs: T0 }, 5000);
    payload.items.push(3);
    const claim = await store.claim('k', 'fp', 'b', 1000);
    // Dates become ISO strings, exactly as through Redis or Postgres.
    expect(claim).toEqual({
      kind: 'completed',
      stored: {
        outcome: 'SUCCESS',
        result: { items: [1, 2], when: new Date(T0).toISOString() },
        completedAtMs: T0,
      },
    });
  });

  it('rejects a result JSON cannot hold and leaves the claim in flight', async () => {
    const { store } = setup();
    await store.claim('k', 'fp', 'a', 1000);
    await expect(
      store.complete('k', 'a', { outcome: 'SUCCESS', result: 10n, completedAtMs: T0 }, 5000),
    ).rejects.toThrow(TypeError);
    expect((await store.claim('k', 'fp', 'b', 1000)).kind).toBe('in-flight');
  });

  it('purgeExpired drops exactly the dead records', async () => {
    const { clock, store } = setup(10_000);
    const stored: StoredResult = { outcome: 'SUCCESS', result: null, completedAtMs: T0 };
    await store.claim('done-short', 'fp', 'a', 1000);
    await store.complete('done-short', 'a', stored, 2000);
    await store.claim('done-long', 'fp', 'a', 1000);
    await store.complete('done-long', 'a', stored, 60_000);
    await store.claim('abandoned', 'fp', 'a', 1000);
    expect(store.purgeExpired()).toBe(0);
    await clock.advance(20_000);
    expect(store.purgeExpired()).toBe(2);
    expect((await store.claim('done-long', 'fp', 'b', 1000)).kind).toBe('completed');
  });

  it('refuses a non-positive retention', () => {
    expect(() => new MemoryIdempotencyStore(new ManualClock(), { abandonedRetentionMs: 0 })).toThrow(
      RangeError,
    );
  });
});
