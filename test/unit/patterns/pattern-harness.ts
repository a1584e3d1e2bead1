import { randomBytes } from 'node:crypto';
import { MemoryApprovalStore } from '../../../libs/adapters/memory/approval-store.js';
import { MemorySingleUseStore } from '../../../libs/adapters/memory/single-use-store.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import type { ExecutionContext, NormalizedToolCall, Principal } from '../../../libs/core/types.js';
import { PreviewGate } from '../../../libs/patterns/preview/preview-gate.js';
import type { PreviewKey } from '../../../libs/patterns/preview/preview-key.js';
import type { PolicyEngine } from '../../../libs/pipeline/deps.js';
import type { GuardPipeline, PipelineRun } from '../../../libs/pipeline/guard-pipeline.js';
import { createPolicyEngine } from '../../../libs/policy/policy-engine.js';
import type { JobStore } from '../../../libs/ports/job-store.js';
import type { SingleUseStore } from '../../../libs/ports/single-use-store.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import { STORE_DOWNSTREAM_LIMITS, STORE_POLICY, storeTools } from '../../../services/catalog/index.js';
import { MemoryPurchaseOrders } from '../../../services/catalog/tools/purchase-order-backend.js';
import { purchaseOrderTools } from '../../../services/catalog/tools/purchase-order-tools.js';
import { MemoryJobStore } from '../../../libs/adapters/memory/job-store.js';
import { reportJobTools } from '../../../services/catalog/tools/report-job-tools.js';
import { createMemoryDownstreams } from '../../../services/downstreams/memory-downstreams.js';
import type { StoreDownstreams } from '../../../services/downstreams/store-downstreams.js';
import { memoryPipeline } from '../../helpers/memory-pipeline.js';
import { agentPrincipal } from '../../helpers/principals.js';
import { ctxFor, toolCall } from '../../helpers/tool-calls.js';

export const T0 = Date.parse('2026-11-30T09:00:00.000Z');

const PURCHASING_SCOPES = ['purchase_orders:write', 'inventory:write', 'reports:read'];

/** An assistant ordering stock for warehouse worker W-1. */
export const buyer = agentPrincipal('agent:purchasing', 'W-1', ['warehouse'], PURCHASING_SCOPES);

/** The same assistant acting for another warehouse worker. */
export const otherBuyer: Principal = { ...buyer, onBehalfOf: 'W-2' };

/** A support assistant: no purchasing role. */
export const support = agentPrincipal('agent:support-desk', 'S-1', ['support'], PURCHASING_SCOPES);

export { ctxFor, toolCall };

/** The store's tools plus the purchase-order and report-job tools behind a real guard pipeline. */
export interface PatternHarness {
  readonly clock: ManualClock;
  readonly key: PreviewKey;
  readonly singleUse: SingleUseStore;
  readonly approvals: MemoryApprovalStore;
  readonly jobs: JobStore;
  readonly purchaseOrders: MemoryPurchaseOrders;
  readonly downstreams: StoreDownstreams;
  readonly pipeline: GuardPipeline;
  readonly registry: ToolRegistry;
  /** Replaces the policy in force (same rules, another version). */
  setPolicyVersion(version: string): void;
  run(call: NormalizedToolCall, ctx: ExecutionContext): Promise<PipelineRun>;
  /** Purchase orders placed in t1: the effect count. */
  placed(): Promise<number>;
  close(): void;
}

/** Everything in memory, on one manual clock. */
export function patternHarness(): PatternHarness {
  const clock = new ManualClock(T0);
  const key: PreviewKey = { alg: 'HS256', secret: randomBytes(32) };
  const singleUse = new MemorySingleUseStore(clock);
  const approvals = new MemoryApprovalStore(clock);
  const jobs = new MemoryJobStore();
  const downstreams = createMemoryDownstreams({ clock });
  const purchaseOrders = new MemoryPurchaseOrders(clock);
  let policy: PolicyEngine | undefined;
  const livePolicy: PolicyEngine = {
    get version() {
      return policy!.version;
    },
    factsOf: (tool) => policy!.factsOf(tool),
    evaluate: (tool, args, ctx, facts) => policy!.evaluate(tool, args, ctx, facts),
  };
  const registry = new ToolRegistry();
  const tools = [
    ...storeTools(downstreams, clock),
    ...purchaseOrderTools({
      inventory: downstreams.inventory,
      purchaseOrders,
      gate: new PreviewGate({ key, store: singleUse, approvals, clock }),
      policyVersion: () => livePolicy.version,
    }),
    ...reportJobTools({ jobs, payments: downstreams.payments, clock }),
  ];
  for (const tool of tools) registry.register(tool);
  policy = createPolicyEngine({ ...STORE_POLICY, version: 'store-p1' }, tools);
  const { pipeline, breakers } = memoryPipeline({
    clock,
    tools: registry,
    policy: livePolicy,
    downstreamLimits: STORE_DOWNSTREAM_LIMITS,
    owner: 'executor-patterns-test',
  });
  return {
    clock,
    key,
    singleUse,
    approvals,
    jobs,
    purchaseOrders,
    downstreams,
    pipeline,
    registry,
    setPolicyVersion: (version) => {
      policy = createPolicyEngine({ ...STORE_POLICY, version }, tools);
    },
    run: (call, ctx) => pipeline.run(call, ctx),
    placed: async () => (await purchaseOrders.list('t1')).length,
    close: () => breakers.shutdown(),
  };
}
