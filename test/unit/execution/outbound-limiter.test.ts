import { describe, expect, it } from 'vitest';
import { MemoryRateLimiter } from '../../../libs/adapters/memory/index.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { createOutboundLimiter, outboundBucketKey } from '../../../libs/execution/outbound-limiter.js';
import type { RateLimiter } from '../../../libs/ports/rate-limiter.js';

const flush = () => new Promise((r) => setImmediate(r));

/** An outbound limiter with `limits` over an in-memory store, on a manual clock at 0. */
function onMemoryStore(
  limits: Parameters<typeof createOutboundLimiter>[1],
  onAcquired?: Parameters<typeof createOutboundLimiter>[3],
) {
  const clock = new ManualClock(0);
  return { clock, limiter: createOutboundLimiter(new MemoryRateLimiter(clock), limits, clock, onAcquired) };
}

/**
 * Starts `acquire` and checks that it still waits once pending callbacks ran and `ms - 1` of the
 * clock passed, and that it completes when the clock reaches `ms`.
 */
async function expectReleasedAfter(clock: ManualClock, ms: number, acquire: () => Promise<void>) {
  let got = false;
  const pending = acquire().then(() => (got = true));
  await flush();
  expect(got).toBe(false);
  await clock.advance(ms - 1);
  expect(got).toBe(false);
  await clock.advance(1);
  await pending;
  expect(got).toBe(true);
}

describe('outbound limiter', () => {
  it('spends from one bucket per downstream, keyed ob:<downstream>', async () => {
    const clock = new ManualClock(0);
    const inner = new MemoryRateLimiter(clock);
    const keys: string[] = [];
    const spy: RateLimiter = {
      take: (key, limit, cost) => {
        keys.push(key);
        return inner.take(key, limit, cost);
      },
    };
    const limiter = createOutboundLimiter(spy, { crm: { capacity: 5, refillPerSecond: 1 } }, clock);
    await limiter.acquire('crm', new AbortController().signal);
    expect(keys).toEqual(['ob:crm']);
    expect(outboundBucketKey('crm')).toBe('ob:crm');
  });

  it('waits for a token instead of failing, and is released by the refill', async () => {
    const { clock, limiter } = onMemoryStore({ crm: { capacity: 2, refillPerSecond: 1 } });
    const signal = new AbortController().signal;
    await limiter.acquire('crm', signal);
    await limiter.acquire('crm', signal);
    await expectReleasedAfter(clock, 1_000, () => limiter.acquire('crm', signal));
  });

  it('reports each token taken with how long the call waited for it, and nothing for unlimited ones', async () => {
    const waits: Array<[string, number]> = [];
    const { clock, limiter } = onMemoryStore(
      { crm: { capacity: 1, refillPerSecond: 2 } },
      (downstream, waitedMs) => void waits.push([downstream, waitedMs]),
    );
    const signal = new AbortController().signal;
    await limiter.acquire('crm', signal);
    await limiter.acquire('mail', signal);
    const second = limiter.acquire('crm', signal);
    await flush();
    await clock.advance(500);
    await second;
    expect(waits).toEqual([
      ['crm', 0],
      ['crm', 500],
    ]);
  });

  it('two limiters over the same store share the budget (as executors sharing Redis do)', async () => {
    const clock = new ManualClock(0);
    const shared = new MemoryRateLimiter(clock);
    const limits = { crm: { capacity: 1, refillPerSecond: 1 } };
    const a = createOutboundLimiter(shared, limits, clock);
    const b = createOutboundLimiter(shared, limits, clock);
    const signal = new AbortController().signal;
    await a.acquire('crm', signal);
    await expectReleasedAfter(clock, 1_000, () => b.acquire('crm', signal));
  });

  it('rejects with the signal reason when aborted while waiting', async () => {
    const { clock, limiter } = onMemoryStore({ crm: { capacity: 1, refillPerSecond: 0.01 } });
    const controller = new AbortController();
    await limiter.acquire('crm', controller.signal);
    const pending = limiter.acquire('crm', controller.signal);
    controller.abort(new Error('gave up'));
    await expect(pending).rejects.toThrow('gave up');
    expect(clock.pendingSleepers).toBe(0);
  });

  it('does not limit a downstream without a configured limit', async () => {
    let takes = 0;
    const limiter = createOutboundLimiter(
      { take: () => Promise.resolve({ allowed: false, remaining: 0, retryAfterMs: (takes += 1) }) },
      {},
      new ManualClock(0),
    );
    await limiter.acquire('unlisted', new AbortController().signal);
    await limiter.acquire('toString', new AbortController().signal);
    expect(takes).toBe(0);
  });

  it('fails closed with DEPENDENCY_UNAVAILABLE when the limiter store is down', async () => {
    const limiter = createOutboundLimiter(
      { take: () => Promise.reject(new Error('ECONNREFUSED')) },
      { crm: { capacity: 1, refillPerSecond: 1 } },
      new ManualClock(0),
    );
    await expect(limiter.acquire('crm', new AbortController().signal)).rejects.toMatchObject({
      code: 'DEPENDENCY_UNAVAILABLE',
    });
  });
});
