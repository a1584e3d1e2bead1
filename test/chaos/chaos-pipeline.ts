import type { Cluster, Redis } from 'ioredis';
import { RedisIdempotencyStore, RedisRateLimiter } from '../../libs/adapters/redis/index.js';
import { systemClock } from '../../libs/core/system-clock.js';
import { createCircuitBreakers, type ManagedCircuitBreakers } from '../../libs/execution/breakers.js';
import { createOutboundLimiter } from '../../libs/execution/outbound-limiter.js';
import { GuardPipeline } from '../../libs/pipeline/guard-pipeline.js';
import type { PolicyEngine } from '../../libs/pipeline/deps.js';
import type { IdempotencyStore } from '../../libs/ports/idempotency-store.js';
import { createPolicyEngine } from '../../libs/policy/index.js';
import { ToolRegistry } from '../../libs/registry/tool-registry.js';
import type { ToolDefinition } from '../../libs/registry/tool-definition.js';
import { STAGES } from '../../libs/guards/stages.js';

/** A pipeline wired like the executor process wires it, over the Redis a scenario chooses. */
export interface ChaosPipeline {
  readonly pipeline: GuardPipeline;
  readonly registry: ToolRegistry;
  readonly breakers: ManagedCircuitBreakers;
}

export interface ChaosPipelineOptions {
  readonly redis: Redis | Cluster;
  readonly keyPrefix: string;
  readonly owner: string;
  readonly tools: readonly ToolDefinition[];
  /** The idempotency store; default: Redis on `redis`. */
  readonly idempotency?: IdempotencyStore;
  readonly policy?: PolicyEngine;
  /** Breaker settings; `volumeThreshold` very large means "no breaker in effect". */
  readonly breaker?: { readonly errorPercent: number; readonly volume: number; readonly resetMs: number };
}

/** Builds the guard pipeline for an in-process executor; the caller shuts the breakers down. */
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
  const rateLimiter = new RedisRateLimiter(opts.redis, { keyPrefix: opts.keyPrefix });
  const pipeline = new GuardPipeline(
    {
      tools: registry,
      idempotency: opts.idempotency ?? new RedisIdempotencyStore(opts.redis, { keyPrefix: opts.keyPrefix }),
      rateLimiter,
      policy: opts.policy ?? createPolicyEngine([], 'chaos'),
      breakers,
      outbound: createOutboundLimiter(rateLimiter, {}, systemClock),
      clock: systemClock,
      owner: opts.owner,
      settings: { resultTtlMs: 600_000, leaseMarginMs: 1_000 },
    },
    STAGES,
  );
  return { pipeline, registry, breakers };
}
