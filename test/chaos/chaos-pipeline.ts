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
import type { EventPublisher, KeyedSubscriber } from '../../libs/ports/event-bus.js';
import type { Logger } from '../../libs/ports/logger.js';
import type { GuardedExecutor } from '../../services/executor/create-executor.js';
import { AUDIENCE, ISSUER, PARTITIONS, type ExecutorStack } from '../integration/executor/executor-stack.js';
import { testExecutor } from '../integration/executor/test-parts.js';

/**
 * What a scenario's in-process executors are built from (by `createExecutor`, through a stack's
 * `executor()`, `labExecutor` or the ledger scenarios' `executor`): the scenario's tools and rules, its stores on
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
    policy: opts.policy ?? createPolicyEngine({ version: 'chaos' }, []),
    downstreamLimits: {},
  };
  return {
    catalog,
    idempotency: opts.idempotency ?? new RedisIdempotencyStore(opts.redis, { keyPrefix: opts.keyPrefix }),
    rateLimiter: new RedisRateLimiter(opts.redis, { keyPrefix: opts.keyPrefix }),
    breakers,
  };
}

/** Where a scenario's in-process executor runs and how it is told apart. */
export interface ChaosExecutorOptions {
  /** Where it consumes and publishes: the stack's bus, or one on a scenario's own servers. */
  readonly bus: EventPublisher & KeyedSubscriber;
  /** Its owner id, unique in the group. */
  readonly ownerId: string;
  readonly logger: Logger;
  /** Calls it runs at once. */
  readonly maxConcurrency: number;
}

/**
 * An in-process executor of `stack`'s group (`<prefix>-executors`), built by `createExecutor`
 * (`testExecutor`) from the chaos parts `built` (tools, stores, the scenario's shared breakers), on
 * the stack's topics, codec and principal keys, with a redelivery backoff of 50 ms doubling to
 * 1 s. Started and stopped by the caller.
 */
export function chaosExecutor(
  stack: ExecutorStack,
  built: ChaosPipeline,
  options: ChaosExecutorOptions,
): GuardedExecutor {
  return testExecutor({
    ...built,
    bus: options.bus,
    codec: stack.codec,
    topics: stack.topics,
    resultsPartitions: PARTITIONS.results,
    jwks: stack.jwks,
    issuer: ISSUER,
    audience: AUDIENCE,
    logger: options.logger,
    ownerId: options.ownerId,
    groupId: `${stack.prefix}-executors`,
    settings: { maxConcurrency: options.maxConcurrency },
    backoff: { baseDelayMs: 50, maxDelayMs: 1_000 },
  });
}
