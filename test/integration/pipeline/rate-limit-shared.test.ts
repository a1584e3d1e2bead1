import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisIdempotencyStore, RedisRateLimiter } from '../../../libs/adapters/redis/index.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import type { ToolCallResult } from '../../../libs/core/types.js';
import { createCircuitBreakers } from '../../../libs/execution/breakers.js';
import type { ManagedCircuitBreakers } from '../../../libs/execution/breakers.js';
import { createOutboundLimiter } from '../../../libs/execution/outbound-limiter.js';
import { GuardPipeline } from '../../../libs/pipeline/guard-pipeline.js';
import { createPolicyEngine } from '../../../libs/policy/index.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import { createTestRedis } from '../../helpers/redis.js';
import type { TestRedis } from '../../helpers/redis.js';
import { uniqueName } from '../../helpers/names.js';
import { call, context, countingRefundTool, principal } from '../../unit/pipeline/fixtures.js';
import { STAGES } from '../../../libs/guards/stages.js';

const CAPACITY = 5;

/**
 * Two executors, each with its own Redis connection, registry and breakers, share one Redis: the
 * rate-limit budget declared on the tool must hold across both, not per instance.
 */
describe('rate limit shared across executors through one Redis', () => {
  let test: TestRedis;
  let second: Redis;
  const breakers: ManagedCircuitBreakers[] = [];
  // One real tool implementation behind both executors, counting every invocation.
  const refund = countingRefundTool({
    rateLimit: { capacity: CAPACITY, refillPerSecond: 0.001, per: ['tenant'] },
  });

  function executor(redis: Redis, owner: string): GuardPipeline {
    const registry = new ToolRegistry();
    registry.register(refund.tool);
    const rateLimiter = new RedisRateLimiter(redis, { keyPrefix: test.prefix });
    const b = createCircuitBreakers(
      { errorThresholdPercentage: 50, volumeThreshold: 10, resetTimeoutMs: 30_000, timeoutMs: false },
      systemClock,
    );
    breakers.push(b);
    return new GuardPipeline(
      {
        tools: registry,
        idempotency: new RedisIdempotencyStore(redis, { keyPrefix: test.prefix }),
        rateLimiter,
        policy: createPolicyEngine({ version: 'none' }, []),
        breakers: b,
        outbound: createOutboundLimiter(rateLimiter, {}, systemClock),
        clock: systemClock,
        owner,
        settings: { resultTtlMs: 60_000, leaseMarginMs: 5_000 },
      },
      STAGES,
    );
  }

  beforeAll(() => {
    test = createTestRedis('rl_shared');
    second = test.redis.duplicate();
  });

  afterAll(async () => {
    for (const b of breakers) b.shutdown();
    await second.quit();
    await test.close();
  });

  it('3x capacity concurrent calls split across two executors: exactly capacity reach the tool', async () => {
    const a = executor(test.redis, 'executor-a');
    const b = executor(second, 'executor-b');
    // A tenant of this test's own, so no other run's bucket is shared.
    const tenant = uniqueName('tenant');
    const ctxFor = (i: number) =>
      context({
        tenant,
        taskId: 'task-shared',
        index: i,
        principal: principal({ tenant, id: `agent-${i % 3}` }),
      });

    const runs = Array.from({ length: 3 * CAPACITY }, (_, i) =>
      (i % 2 === 0 ? a : b).run(call({ order_id: `O-${i}`, amount: 10 }), ctxFor(i)),
    );
    const results: ToolCallResult[] = (await Promise.all(runs)).map((r) => r.result);

    const succeeded = results.filter((r) => r.outcome === 'SUCCESS');
    const limited = results.filter((r) => r.outcome === 'RATE_LIMITED');
    expect(refund.calls()).toBe(CAPACITY);
    expect(succeeded).toHaveLength(CAPACITY);
    expect(limited).toHaveLength(2 * CAPACITY);
    for (const r of limited) {
      expect(r.toolInvocations).toBe(0);
      expect(r.error?.code).toBe('RATE_LIMITED');
      expect(r.error?.retryable).toBe(true);
      expect(r.error?.retryAfterMs).toBeGreaterThan(0);
    }
    // The bucket lives in Redis under the test's prefix, at rl:<tenant>:<tool>:tenant:<tenant>.
    const key = new RedisRateLimiter(test.redis, { keyPrefix: test.prefix }).bucketRedisKey(
      `rl:${tenant}:issue_refund:tenant:${tenant}`,
    );
    expect(await test.redis.exists(key)).toBe(1);
  });
});
