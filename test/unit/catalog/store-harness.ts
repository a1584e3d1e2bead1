import { MemoryIdempotencyStore, MemoryRateLimiter } from '../../../libs/adapters/memory/index.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import type { ExecutionContext, NormalizedToolCall, Principal } from '../../../libs/core/types.js';
import { createCircuitBreakers } from '../../../libs/execution/breakers.js';
import type { ManagedCircuitBreakers } from '../../../libs/execution/breakers.js';
import { createOutboundLimiter } from '../../../libs/execution/outbound-limiter.js';
import type { PipelineDeps } from '../../../libs/pipeline/deps.js';
import { GuardPipeline, type PipelineRun } from '../../../libs/pipeline/guard-pipeline.js';
import type { Clock } from '../../../libs/ports/clock.js';
import {
  buildStoreCatalog,
  type PatternBackends,
  type StoreCatalog,
} from '../../../services/catalog/index.js';
import { createMemoryDownstreams } from '../../../services/downstreams/memory-downstreams.js';
import type { DownstreamOptions, StoreDownstreams } from '../../../services/downstreams/store-downstreams.js';

export const T0 = Date.parse('2026-11-29T23:00:00.000Z');

/** Ana's storefront session: an agent acting for customer C-1. */
export const ana: Principal = {
  id: 'agent:storefront',
  tenant: 't1',
  kind: 'agent',
  onBehalfOf: 'C-1',
  roles: ['customer'],
  scopes: ['orders:read', 'refunds:write', 'crm:read'],
};

/** Ben's storefront session: the same agent acting for customer C-2. */
export const ben: Principal = { ...ana, onBehalfOf: 'C-2' };

/** The support desk assistant acting for support rep S-1. */
export const supportDesk: Principal = {
  id: 'agent:support-desk',
  tenant: 't1',
  kind: 'agent',
  onBehalfOf: 'S-1',
  roles: ['support'],
  scopes: ['orders:read', 'refunds:write', 'crm:read', 'customers:read', 'inventory:write'],
};

/** A manager signed in directly: no refund limit of its own. */
export const manager: Principal = {
  id: 'M-1',
  tenant: 't1',
  kind: 'user',
  roles: ['manager'],
  scopes: ['orders:read', 'refunds:write'],
};

let task = 0;
/** A context for `principal`; each call gets a fresh task unless `taskId` is given. */
export function ctxFor(principal: Principal, overrides: Partial<ExecutionContext> = {}): ExecutionContext {
  task += 1;
  return {
    principal,
    tenant: principal.tenant,
    taskId: `task-${task}`,
    step: 0,
    index: 0,
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    ...overrides,
  };
}

let seq = 0;
export function toolCall(name: string, args: Record<string, unknown>): NormalizedToolCall {
  seq += 1;
  return { id: `call_${seq}`, name, arguments: args };
}

export interface StoreHarness {
  readonly clock: ManualClock;
  readonly catalog: StoreCatalog;
  readonly downstreams: StoreDownstreams;
  readonly breakers: ManagedCircuitBreakers;
  readonly pipeline: GuardPipeline;
  /** Runs one call to the end, moving the manual clock through backoffs and timeouts. */
  run(call: NormalizedToolCall, ctx: ExecutionContext): Promise<PipelineRun>;
  close(): Promise<void>;
}

/** The store catalog on in-memory downstreams, behind a real guard pipeline with memory adapters. */
export function storeHarness(
  options: {
    breakerVolume?: number;
    downstreams?: Partial<DownstreamOptions>;
    /** Default: the catalog's in-memory pattern backends. */
    patterns?: (clock: Clock) => PatternBackends;
  } = {},
): StoreHarness {
  const clock = new ManualClock(T0);
  const downstreams = createMemoryDownstreams({ clock, ...options.downstreams });
  const catalog = buildStoreCatalog(downstreams, clock, options.patterns?.(clock));
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
    tools: catalog.registry,
    idempotency: new MemoryIdempotencyStore(clock),
    rateLimiter,
    policy: catalog.policy,
    breakers,
    outbound: createOutboundLimiter(rateLimiter, catalog.downstreamLimits, clock),
    clock,
    owner: 'executor-catalog-test',
    settings: { resultTtlMs: 86_400_000, leaseMarginMs: 5_000 },
  };
  const pipeline = new GuardPipeline(deps);
  return {
    clock,
    catalog,
    downstreams,
    breakers,
    pipeline,
    run: (call, ctx) => driveClock(clock, pipeline.run(call, ctx)),
    close: async () => {
      breakers.shutdown();
      await catalog.close();
    },
  };
}

/** Advances `clock` in 50 ms steps until `work` settles (backoffs, timeouts and hangs need time). */
export async function driveClock<T>(clock: ManualClock, work: Promise<T>): Promise<T> {
  let done = false;
  const tracked = work.finally(() => {
    done = true;
  });
  for (let i = 0; !done && i < 10_000; i++) await clock.advance(50);
  return tracked;
}
