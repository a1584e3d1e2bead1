import type { Cluster, Redis } from 'ioredis';
import { RedisIdempotencyStore, RedisRateLimiter } from '../../libs/adapters/redis/index.js';
import type { Catalog } from '../../libs/catalog/catalog.js';
import { systemClock } from '../../libs/core/system-clock.js';
import { createCircuitBreakers, type ManagedCircuitBreakers } from '../../libs/execution/breakers.js';
import type { PolicyEngine } from '../../libs/pipeline/deps.js';
import type { IdempotencyStore } from '../../libs/ports/idempotency-store.js';
import type { RateLimiter } from '../../libs/ports/rate-limiter.js';
import { createPolicyEngine } from '../../libs/policy/index.js';
import { ToolRegistry } from '../../libs/registry/tool-registry.js';
import type { ToolDefinition } from '../../libs/registry/tool-definition.js';

/**
 * What a scenario's in-process executors are built from (by `createExecutor`, through a stack's
 * `executor()`, `labExecutor` or `ledgerExecutor`): the scenario's tools and rules, its stores on
 * the Redis it chooses, and one breaker set every executor of the scenario shares. The caller shuts
 * the breakers down after the last of those executors stopped.
 */
export interface ChaosPipeline {
  readonly catalog: Catalog;
  readonly idempotency: IdempotencyStore;
  readonly rateLimiter: RateLimiter;
  /** Shared by every executor built from these parts (`ExecutorOptions.breakers`). */
  readonly breakers: ManagedCircuitBreakers;
}

export interface ChaosPipelineOptions {
  readonly redis: Redis | Cluster;
  readonly keyPrefix: string;
  readonly tools: readonly ToolDefinition[];
  /** The idempotency store; default: Redis on `redis`. */
  readonly idempotency?: IdempotencyStore;
  readonly policy?: PolicyEngine;
  /** Breaker settings; `volumeThreshold` very large means "no breaker in effect". */
  readonly breaker?: { readonly errorPercent: number; readonly volume: number; readonly resetMs: number };
}

/** The parts of a scenario's in-process executors; the caller shuts the breakers down. */
export function chaosPipeline(opts: ChaosPipelineOptions): ChaosPipeline {
  const registry = new ToolRegistry();
  for (const tool of opts.tools) registry.register(tool);
  const b = opts.breaker ?? { errorPercent: 50, volume: 1_000_000, resetMs: 30_000 };
  const breakers = createCircuitBreakers(
    {
      errorThresholdPercentage: b.errorPercent,
      volumeThreshold: b.volume,
      resetTimeoutMs: b.resetMs,
      timeoutMs: false,
    },
    systemClock,
  );
  const catalog: Catalog = {
    registry,
    policy: opts.policy ?? createPolicyEngine([], 'chaos'),
    downstreamLimits: {},
  };
  return {
    catalog,
    idempotency: opts.idempotency ?? new RedisIdempotencyStore(opts.redis, { keyPrefix: opts.keyPrefix }),
    rateLimiter: new RedisRateLimiter(opts.redis, { keyPrefix: opts.keyPrefix }),
    breakers,
  };
}
