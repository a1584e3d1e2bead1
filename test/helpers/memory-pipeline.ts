import {
  MemoryFactStore,
  MemoryIdempotencyStore,
  MemoryRateLimiter,
} from '../../libs/adapters/memory/index.js';
import {
  createCircuitBreakers,
  type BreakerOptions,
  type ManagedCircuitBreakers,
} from '../../libs/execution/breakers.js';
import { createOutboundLimiter } from '../../libs/execution/outbound-limiter.js';
import type { PipelineDeps, PipelineSettings } from '../../libs/pipeline/deps.js';
import { GuardPipeline } from '../../libs/pipeline/guard-pipeline.js';
import type { Clock } from '../../libs/core/clock.js';
import { STAGES } from '../../libs/guards/stages.js';

/** What a memory-backed guard pipeline is built from. */
export interface MemoryPipelineOptions {
  readonly clock: Clock;
  readonly tools: PipelineDeps['tools'];
  readonly policy: PipelineDeps['policy'];
  /** Per-downstream outbound limits, as the catalog declares them. */
  readonly downstreamLimits: Parameters<typeof createOutboundLimiter>[1];
  /** The lease owner the idempotency store records. */
  readonly owner: string;
  /** Overrides of the breaker defaults (50 % errors over 20 calls, 30 s reset, no breaker timeout). */
  readonly breaker?: Partial<BreakerOptions>;
  /** Default: a fresh memory store on `clock`; pass one to share it between pipelines or use a server. */
  readonly idempotency?: PipelineDeps['idempotency'];
  /** Default: a fresh memory fact store. */
  readonly facts?: PipelineDeps['facts'];
  /** Default: results kept 24 h, lease margin 5 s. */
  readonly settings?: PipelineSettings;
}

/** A guard pipeline and its breakers; the caller must `breakers.shutdown()` when done. */
export interface MemoryPipeline {
  readonly pipeline: GuardPipeline;
  readonly breakers: ManagedCircuitBreakers;
}

/**
 * A real guard pipeline on a memory rate limiter (shared with the outbound limiter) and, unless one is
 * given, a memory idempotency store, with the breaker and result settings above unless `options` override them.
 */
export function memoryPipeline(options: MemoryPipelineOptions): MemoryPipeline {
  const { clock } = options;
  const rateLimiter = new MemoryRateLimiter(clock);
  const breakers = createCircuitBreakers(
    {
      errorThresholdPercentage: 50,
      volumeThreshold: 20,
      resetTimeoutMs: 30_000,
      timeoutMs: false,
      ...options.breaker,
    },
    clock,
  );
  const deps: PipelineDeps = {
    tools: options.tools,
    idempotency: options.idempotency ?? new MemoryIdempotencyStore(clock),
    rateLimiter,
    policy: options.policy,
    facts: options.facts ?? new MemoryFactStore(),
    breakers,
    outbound: createOutboundLimiter(rateLimiter, options.downstreamLimits, clock),
    clock,
    owner: options.owner,
    settings: options.settings ?? { resultTtlMs: 86_400_000, leaseMarginMs: 5_000 },
  };
  return { pipeline: new GuardPipeline(deps, STAGES), breakers };
}
