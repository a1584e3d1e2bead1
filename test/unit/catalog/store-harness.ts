import { ManualClock } from '../../../libs/core/manual-clock.js';
import type { ExecutionContext, NormalizedToolCall, Principal } from '../../../libs/core/types.js';
import type { ManagedCircuitBreakers } from '../../../libs/execution/breakers.js';
import type { GuardPipeline, PipelineRun } from '../../../libs/pipeline/guard-pipeline.js';
import type { Clock } from '../../../libs/core/clock.js';
import {
  buildStoreCatalog,
  type PatternBackends,
  type StoreCatalog,
} from '../../../services/catalog/index.js';
import { createMemoryDownstreams } from '../../../services/downstreams/memory-downstreams.js';
import type { DownstreamOptions, StoreDownstreams } from '../../../services/downstreams/store-downstreams.js';
import { memoryPipeline } from '../../helpers/memory-pipeline.js';
import { agentPrincipal } from '../../helpers/principals.js';
import { ctxFor, toolCall } from '../../helpers/tool-calls.js';

export const T0 = Date.parse('2026-11-29T23:00:00.000Z');

/** Ana's storefront session: an agent acting for customer C-1. */
export const ana = agentPrincipal(
  'agent:storefront',
  'C-1',
  ['customer'],
  ['orders:read', 'refunds:write', 'crm:read'],
);

/** Ben's storefront session: the same agent acting for customer C-2. */
export const ben: Principal = { ...ana, onBehalfOf: 'C-2' };

/** The support desk assistant acting for support rep S-1. */
export const supportDesk = agentPrincipal(
  'agent:support-desk',
  'S-1',
  ['support'],
  ['orders:read', 'refunds:write', 'crm:read', 'customers:read', 'inventory:write'],
);

/** A manager signed in directly: no refund limit of its own. */
export const manager: Principal = {
  id: 'M-1',
  tenant: 't1',
  kind: 'user',
  roles: ['manager'],
  scopes: ['orders:read', 'refunds:write'],
};

export { ctxFor, toolCall };

export interface StoreHarness {
  readonly clock: ManualClock;
  readonly catalog: StoreCatalog;
  readonly downstreams: StoreDownstreams;
  readonly breakers: ManagedCircuitBreakers;
  readonly pipeline: GuardPipeline;
  /** Runs one call to the end, moving the manual clock through backoffs and timeouts. */
  run(call: NormalizedToolCall, ctx: ExecutionContext): Promise<PipelineRun>;
  /**
   * `run` of a fresh call to `tool` with `args`, made by `principal` in a fresh context
   * ({@link ctxFor}, with `ctx` pinning any of its fields).
   */
  call(
    tool: string,
    args: Record<string, unknown>,
    principal: Principal,
    ctx?: Partial<ExecutionContext>,
  ): Promise<PipelineRun>;
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
  const { pipeline, breakers } = memoryPipeline({
    clock,
    tools: catalog.registry,
    policy: catalog.policy,
    downstreamLimits: catalog.downstreamLimits,
    owner: 'executor-catalog-test',
    breaker: { volumeThreshold: options.breakerVolume ?? 20 },
  });
  return {
    clock,
    catalog,
    downstreams,
    breakers,
    pipeline,
    run: (call, ctx) => driveClock(clock, pipeline.run(call, ctx)),
    call: (tool, args, principal, ctx) =>
      driveClock(clock, pipeline.run(toolCall(tool, args), ctxFor(principal, ctx))),
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
