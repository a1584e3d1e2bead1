import { MemoryIdempotencyStore, MemoryRateLimiter } from '../../libs/adapters/memory/index.js';
import { createCircuitBreakers, type ManagedCircuitBreakers } from '../../libs/execution/breakers.js';
import { createOutboundLimiter } from '../../libs/execution/outbound-limiter.js';
import type { PipelineDeps } from '../../libs/pipeline/deps.js';
import { GuardPipeline } from '../../libs/pipeline/guard-pipeline.js';
import type { Clock } from '../../libs/ports/clock.js';

/** What a memory-backed guard pipeline is built from. */
export interface MemoryPipelineOptions {
  readonly clock: Clock;
  readonly tools: PipelineDeps['tools'];
  readonly policy: PipelineDeps['policy'];
  /** Per-downstream outbound limits, as the catalog declares them. */
  readonly downstreamLimits: Parameters<typeof createOutboundLimiter>[1];
  /** The lease owner the idempotency store records. */
  readonly owner: string;
  /** Calls a breaker must see before it may open. Default 20. */
  readonly breakerVolume?: number;
}

/** A guard pipeline and its breakers; the caller must `breakers.shutdown()` when done. */
export interface MemoryPipeline {
  readonly pipeline: GuardPipeline;
  readonly breakers: ManagedCircuitBreakers;
}

/**
 * A real guard pipeline on memory adapters (idempotency store, rate limiter shared with the outbound
 * limiter), breakers opening at 50 % errors with a 30 s reset and no breaker timeout, results kept 24 h.
 */
export function memoryPipeline(options: MemoryPipelineOptions): MemoryPipeline {
  const { clock } = options;
  const rateLimiter = new MemoryRateLimiter(clock);
  const breakers = createCircuitBreakers(
    {
      errorThresholdPercentage: 50,
      volumeThreshold: options.breakerVolume ?? 20,
      resetTimeoutMs: 30_000,
      timeoutMs: false,
    },
    clock,
  );
  const deps: PipelineDeps = {
    tools: options.tools,
    idempotency: new MemoryIdempotencyStore(clock),
    rateLimiter,
    policy: options.policy,
    breakers,
    outbound: createOutboundLimiter(rateLimiter, options.downstreamLimits, clock),
    clock,
    owner: options.owner,
    settings: { resultTtlMs: 86_400_000, leaseMarginMs: 5_000 },
  };
  return { pipeline: new GuardPipeline(deps), breakers };
}
