import { MemoryIdempotencyStore, MemoryRateLimiter } from '../../../libs/adapters/memory/index.js';
import type { Catalog } from '../../../libs/catalog/catalog.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import type { ExecutionContext, Principal, ToolCallResult } from '../../../libs/core/types.js';
import { createCircuitBreakers, type ManagedCircuitBreakers } from '../../../libs/execution/breakers.js';
import { createOutboundLimiter } from '../../../libs/execution/outbound-limiter.js';
import { STAGES } from '../../../libs/guards/stages.js';
import { GuardPipeline, type RunOptions } from '../../../libs/pipeline/guard-pipeline.js';
import type { PipelineDeps } from '../../../libs/pipeline/deps.js';

export const TENANT = 't1';

export function principal(overrides: Partial<Principal> = {}): Principal {
  return { id: 'agent-7', tenant: TENANT, kind: 'agent', scopes: ['mcp:use'], roles: [], ...overrides };
}

/** A real guard pipeline (every stage, in-memory stores, the system clock) over a catalog. */
export interface UpstreamPipeline {
  readonly pipeline: GuardPipeline;
  readonly deps: PipelineDeps;
  readonly breakers: ManagedCircuitBreakers;
  /** Runs one call as `who`, each with a fresh task id (so no two calls share an idempotency key). */
  run(
    name: string,
    args: Record<string, unknown>,
    opts?: { readonly principal?: Principal; readonly run?: RunOptions },
  ): Promise<ToolCallResult>;
  close(): void;
}

let task = 0;

export function upstreamPipeline(
  catalog: Catalog,
  breaker: { readonly volumeThreshold?: number } = {},
): UpstreamPipeline {
  const clock = systemClock;
  const rateLimiter = new MemoryRateLimiter(clock);
  const breakers = createCircuitBreakers(
    {
      errorThresholdPercentage: 50,
      volumeThreshold: breaker.volumeThreshold ?? 10,
      resetTimeoutMs: 60_000,
      timeoutMs: false,
    },
    clock,
  );
  const deps: PipelineDeps = {
    tools: catalog.registry,
    idempotency: new MemoryIdempotencyStore(clock),
    rateLimiter,
    policy: catalog.policy,
    breakers,
    outbound: createOutboundLimiter(rateLimiter, catalog.downstreamLimits, clock),
    clock,
    owner: 'executor-test',
    settings: { resultTtlMs: 86_400_000, leaseMarginMs: 5_000 },
  };
  const pipeline = new GuardPipeline(deps, STAGES);
  return {
    pipeline,
    deps,
    breakers,
    async run(name, args, opts = {}) {
      task += 1;
      const who = opts.principal ?? principal();
      const ctx: ExecutionContext = {
        principal: who,
        tenant: who.tenant,
        taskId: `task-${task}`,
        step: 0,
        index: 0,
        traceId: '0af7651916cd43dd8448eb211c80319c',
      };
      const { result } = await pipeline.run({ id: `call_${task}`, name, arguments: args }, ctx, opts.run);
      return result;
    },
    close: () => breakers.shutdown(),
  };
}
