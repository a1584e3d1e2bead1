import { z } from 'zod';
import {
  MemoryFactStore,
  MemoryIdempotencyStore,
  MemoryRateLimiter,
} from '../../../libs/adapters/memory/index.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import type { ExecutionContext, NormalizedToolCall, Principal } from '../../../libs/core/types.js';
import { createCircuitBreakers } from '../../../libs/execution/breakers.js';
import type { ManagedCircuitBreakers } from '../../../libs/execution/breakers.js';
import { createOutboundLimiter } from '../../../libs/execution/outbound-limiter.js';
import type { PipelineDeps, PolicyEngine } from '../../../libs/pipeline/deps.js';
import { createPolicyEngine } from '../../../libs/policy/index.js';
import type { PolicyRule } from '../../../libs/policy/index.js';
import type { RateLimiter } from '../../../libs/ports/rate-limiter.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinitionInput } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';

export const TENANT = 't1';

export function principal(overrides: Partial<Principal> = {}): Principal {
  return {
    id: 'agent-7',
    tenant: TENANT,
    kind: 'agent',
    scopes: ['refunds:write'],
    roles: ['support'],
    onBehalfOf: 'user-42',
    ...overrides,
  };
}

export function context(overrides: Partial<ExecutionContext> = {}): ExecutionContext {
  return {
    principal: principal(),
    tenant: TENANT,
    taskId: 'task-1',
    step: 0,
    index: 0,
    traceId: '0af7651916cd43dd8448eb211c80319c',
    ...overrides,
  };
}

let callSeq = 0;
export function call(
  args: Record<string, unknown>,
  overrides: Partial<NormalizedToolCall> = {},
): NormalizedToolCall {
  callSeq += 1;
  return { id: `call_${callSeq}`, name: 'issue_refund', arguments: args, ...overrides };
}

const refundInput = z
  .object({
    order_id: z.string().regex(/^O-\d+$/),
    amount: z.number().positive(),
    reason: z.string().optional(),
    // Data the model may fill in; authorization must never read them.
    approved_by: z.string().optional(),
    role: z.string().optional(),
  })
  .strict();
type RefundInput = z.infer<typeof refundInput>;
const refundOutput = z.object({ refund_id: z.string(), amount: z.number() });
type RefundOutput = z.infer<typeof refundOutput>;

/** A refund tool that counts how often it really ran. */
export interface CountingTool {
  readonly tool: ToolDefinition<RefundInput, RefundOutput>;
  readonly calls: () => number;
}

export function countingRefundTool(
  overrides: Partial<ToolDefinitionInput<RefundInput, RefundOutput>> = {},
): CountingTool {
  let calls = 0;
  const tool = defineTool<RefundInput, RefundOutput>({
    name: 'issue_refund',
    version: '1.0.0',
    description: 'Refund part or all of an order to the original payment method. Not for store credit.',
    input: refundInput,
    output: refundOutput,
    scopes: ['refunds:write'],
    owner: 'payments',
    retrySafety: { kind: 'forwards-key' },
    auditFields: ['order_id', 'amount'],
    execute: (args) => {
      calls += 1;
      return Promise.resolve({ refund_id: `R-${calls}`, amount: args.amount });
    },
    ...overrides,
  });
  return { tool, calls: () => calls };
}

export const REFUND_RULES: PolicyRule[] = [
  {
    id: 'support-refund-limit',
    tool: 'issue_refund',
    when: { roles: ['support'] },
    field: 'amount',
    check: { max: 50 },
    reason: 'Refunds above ${limit} need a manager (asked: ${value}).',
    alternative: 'Route it to a manager.',
  },
];

export interface Harness {
  readonly deps: PipelineDeps;
  readonly clock: ManualClock;
  readonly registry: ToolRegistry;
  readonly breakers: ManagedCircuitBreakers;
  close(): void;
}

/**
 * Real in-memory adapters and real execution helpers around a registry; call `close` after each test.
 * `policy` reuses an engine built for the same tools (building one takes a while); by default it is
 * built from `rules`.
 */
export function harness(
  tools: readonly object[],
  opts: { rules?: PolicyRule[]; rateLimiter?: RateLimiter; clock?: ManualClock; policy?: PolicyEngine } = {},
): Harness {
  const clock = opts.clock ?? new ManualClock(1_700_000_000_000);
  const registry = new ToolRegistry();
  for (const tool of tools) registry.register(tool as ToolDefinition);
  const rateLimiter = opts.rateLimiter ?? new MemoryRateLimiter(clock);
  const breakers = createCircuitBreakers(
    { errorThresholdPercentage: 50, volumeThreshold: 10, resetTimeoutMs: 30_000, timeoutMs: false },
    clock,
  );
  const deps: PipelineDeps = {
    tools: registry,
    idempotency: new MemoryIdempotencyStore(clock),
    rateLimiter,
    // The rules of tools this harness does not register are left out (a rule for a missing tool does not load).
    policy:
      opts.policy ??
      createPolicyEngine(
        {
          version: 'test-1',
          rules: (opts.rules ?? REFUND_RULES).filter(
            (r) => r.tool === '*' || tools.some((t) => (t as ToolDefinition).name === r.tool),
          ),
        },
        tools as ToolDefinition[],
      ),
    facts: new MemoryFactStore(),
    breakers,
    outbound: createOutboundLimiter(rateLimiter, {}, clock),
    clock,
    owner: 'executor-test',
    settings: { resultTtlMs: 86_400_000, leaseMarginMs: 5_000 },
  };
  return { deps, clock, registry, breakers, close: () => breakers.shutdown() };
}
