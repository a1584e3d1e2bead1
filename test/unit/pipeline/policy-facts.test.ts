import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  MemoryFactStore,
  MemoryIdempotencyStore,
  MemoryRateLimiter,
} from '../../../libs/adapters/memory/index.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { callerError, outcomeUnknown } from '../../../libs/core/tool-failure.js';
import { createCircuitBreakers, type ManagedCircuitBreakers } from '../../../libs/execution/breakers.js';
import { createOutboundLimiter } from '../../../libs/execution/outbound-limiter.js';
import { STAGES } from '../../../libs/guards/stages.js';
import type { PipelineDeps, PipelineObserver, PolicyEngine } from '../../../libs/pipeline/deps.js';
import { GuardPipeline } from '../../../libs/pipeline/guard-pipeline.js';
import { createPolicyEngine } from '../../../libs/policy/policy-engine.js';
import type { FactStore } from '../../../libs/ports/fact-store.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import { call, context, principal } from './fixtures.js';

/**
 * Aggregate facts and the shadow policy through the real guard pipeline (memory adapters): what a
 * limit over a total counts, when it is recorded, how it fails closed, and that a shadow policy is
 * recorded and counted but never acted on.
 */

const LIMIT = (limit: string) => `
@id("refund-support-limit")
@reason("Support may refund at most $${limit} per order in total; this would make {facts.refunded}.")
@alternative("Hand the case to a manager.")
forbid (principal, action == Toolgate::Action::"issue_refund", resource)
when { principal.roles.contains("support") && context.facts.refunded.greaterThan(decimal("${limit}")) };`;

const FACTS = [
  {
    name: 'refunded',
    tools: ['issue_refund'],
    measure: { sum: 'amount' },
    per: ['resourceKey'],
    windowMs: 3_600_000,
    by: { roles: ['support'] },
  },
] as const;

type Effect = 'ok' | 'unknown' | 'refused-by-downstream';

interface Rig {
  pipeline: GuardPipeline;
  readonly effects: number[];
  readonly clock: ManualClock;
  readonly seen: { shadow: [string, boolean][]; lost: string[] };
  next: Effect;
}

let breakers: ManagedCircuitBreakers | undefined;
afterEach(() => breakers?.shutdown());

function rig(
  options: { facts?: FactStore | null; shadow?: (tools: ToolDefinition[]) => PolicyEngine } = {},
): Rig {
  const clock = new ManualClock(1_800_000_000_000);
  const state: Rig = {
    pipeline: undefined as unknown as GuardPipeline,
    effects: [],
    clock,
    seen: { shadow: [], lost: [] },
    next: 'ok',
  };
  const refund = defineTool({
    name: 'issue_refund',
    version: '1.0.0',
    owner: 'payments',
    description: 'Refund part of an order.',
    scopes: [],
    input: z.object({ order_id: z.string(), amount: z.number().positive() }),
    output: z.object({ refunded: z.number() }),
    conflictKey: (args, ctx) => `${ctx.tenant}:order:${args.order_id}`,
    retrySafety: { kind: 'forwards-key' },
    auditFields: ['order_id', 'amount'],
    execute: (args) => {
      if (state.next === 'refused-by-downstream') return Promise.reject(callerError('No such payment.'));
      state.effects.push(args.amount);
      if (state.next === 'unknown')
        return Promise.reject(outcomeUnknown('The payment service did not answer.'));
      return Promise.resolve({ refunded: args.amount });
    },
  }) as ToolDefinition;
  const tools = [refund];
  const registry = new ToolRegistry();
  registry.register(refund);
  const rateLimiter = new MemoryRateLimiter(clock);
  breakers = createCircuitBreakers(
    { errorThresholdPercentage: 50, volumeThreshold: 100, resetTimeoutMs: 30_000, timeoutMs: false },
    clock,
  );
  const observer: PipelineObserver = {
    onShadowDisagreement: (tool, allowed) => state.seen.shadow.push([tool, allowed]),
    onFactRecordFailure: (tool) => state.seen.lost.push(tool),
  };
  const facts = options.facts === null ? undefined : (options.facts ?? new MemoryFactStore());
  const deps: PipelineDeps = {
    tools: registry,
    idempotency: new MemoryIdempotencyStore(clock),
    rateLimiter,
    policy: createPolicyEngine({ version: 'active-1', cedar: LIMIT('50.0'), facts: FACTS }, tools),
    ...(options.shadow === undefined ? {} : { shadowPolicy: options.shadow(tools) }),
    ...(facts === undefined ? {} : { facts }),
    breakers,
    outbound: createOutboundLimiter(rateLimiter, {}, clock),
    clock,
    owner: 'executor-test',
    settings: { resultTtlMs: 86_400_000, leaseMarginMs: 5_000 },
    observer,
  };
  state.pipeline = new GuardPipeline(deps, STAGES);
  return state;
}

const support = context();
const manager = context({ principal: principal({ roles: ['manager'] }) });
let index = 0;
const refund = (r: Rig, amount: number, ctx = support, order = 'O-1') =>
  r.pipeline.run(call({ order_id: order, amount }), { ...ctx, index: index++ });

describe('a limit over a total', () => {
  it('ten $49.99 refunds on one order by support: the first passes, every later one is refused', async () => {
    const r = rig();
    const runs = [];
    for (let i = 0; i < 10; i++) runs.push(await refund(r, 49.99));
    expect(runs.map((x) => x.result.outcome)).toEqual(['SUCCESS', ...Array(9).fill('POLICY_VIOLATION')]);
    expect(r.effects).toEqual([49.99]);
    expect(runs[1]!.result.error).toEqual({
      code: 'POLICY_VIOLATION',
      message: 'Support may refund at most $50.0 per order in total; this would make 99.98.',
      retryable: true,
      suggestedFix: 'Hand the case to a manager.',
    });
    expect(runs[0]!.audit.policy).toEqual({
      version: 'active-1',
      roles: ['support'],
      facts: { refunded: '49.9900' },
    });
    expect(runs[1]!.audit.policy).toMatchObject({
      facts: { refunded: '99.9800' },
      ruleId: 'refund-support-limit',
    });
    // Another order has its own total.
    expect((await refund(r, 49.99, support, 'O-2')).result.outcome).toBe('SUCCESS');
  });

  it('counts exactly up to the limit: 5 × $10 pass, the sixth does not', async () => {
    const r = rig();
    const outcomes = [];
    for (let i = 0; i < 6; i++) outcomes.push((await refund(r, 10)).result.outcome);
    expect(outcomes).toEqual([...Array(5).fill('SUCCESS'), 'POLICY_VIOLATION']);
  });

  it("a manager's refunds neither count toward support's total nor are limited by it", async () => {
    const r = rig();
    expect((await refund(r, 400, manager)).result.outcome).toBe('SUCCESS');
    expect((await refund(r, 49.99)).result.outcome).toBe('SUCCESS');
    expect((await refund(r, 0.02)).result.outcome).toBe('POLICY_VIOLATION');
  });

  it('counts an UNRESOLVED refund (its money may have moved), not one the downstream refused', async () => {
    const r = rig();
    r.next = 'refused-by-downstream';
    expect((await refund(r, 40)).result.outcome).toBe('EXECUTION_ERROR');
    r.next = 'unknown';
    expect((await refund(r, 40)).result.outcome).toBe('UNRESOLVED');
    r.next = 'ok';
    const after = await refund(r, 20);
    expect(after.result.outcome).toBe('POLICY_VIOLATION');
    expect(after.audit.policy?.facts).toEqual({ refunded: '60.0000' });
  });

  it('forgets what fell out of the window', async () => {
    const r = rig();
    expect((await refund(r, 45)).result.outcome).toBe('SUCCESS');
    expect((await refund(r, 10)).result.outcome).toBe('POLICY_VIOLATION');
    await r.clock.advance(3_600_000);
    expect((await refund(r, 10)).result.outcome).toBe('SUCCESS');
  });

  it('a redelivered call is answered from its claim and not counted twice', async () => {
    const r = rig();
    const first = call({ order_id: 'O-1', amount: 30 });
    const ctx = { ...support, index: index++ };
    expect((await r.pipeline.run(first, ctx)).result.outcome).toBe('SUCCESS');
    expect((await r.pipeline.run(first, ctx)).result.outcome).toBe('DUPLICATE');
    const next = await refund(r, 20);
    expect(next.result.outcome).toBe('SUCCESS');
    expect(next.audit.policy?.facts).toEqual({ refunded: '50.0000' });
  });
});

describe('failing closed', () => {
  const down: FactStore = {
    sum: () => Promise.reject(new Error('ECONNREFUSED')),
    record: () => Promise.reject(new Error('ECONNREFUSED')),
  };

  it('an unreachable fact store refuses before the tool, retryable', async () => {
    const r = rig({ facts: down });
    const run = await refund(r, 1);
    expect(run.result.error?.code).toBe('DEPENDENCY_UNAVAILABLE');
    expect(run.result.error?.retryable).toBe(true);
    expect(r.effects).toEqual([]);
  });

  it('no fact store at all refuses the calls whose rules read facts (a wiring error)', async () => {
    const r = rig({ facts: null });
    expect((await refund(r, 1)).result.error?.code).toBe('INTERNAL');
    expect(r.effects).toEqual([]);
  });

  it('a contribution that cannot be written after the effect is counted as lost; the answer stands', async () => {
    const store = new MemoryFactStore();
    const flaky: FactStore = {
      sum: (q, now) => store.sum(q, now),
      record: () => Promise.reject(new Error('down')),
    };
    const r = rig({ facts: flaky });
    expect((await refund(r, 10)).result.outcome).toBe('SUCCESS');
    expect(r.seen.lost).toEqual(['issue_refund']);
  });

  it('every audit record names the policy, a refusal before the rules included', async () => {
    const r = rig();
    const refused = await r.pipeline.run(call({ order_id: 'O-1', amount: -5 }), {
      ...support,
      index: index++,
    });
    expect(refused.result.outcome).toBe('SCHEMA_INVALID');
    expect(refused.audit.policy).toEqual({ version: 'active-1' });
  });
});

describe('a shadow policy', () => {
  it('is recorded and counted where it disagrees, and never changes an answer', async () => {
    const r = rig({
      shadow: (tools) =>
        createPolicyEngine({ version: 'candidate-2', cedar: LIMIT('30.0'), facts: FACTS }, tools),
    });
    const first = await refund(r, 25);
    expect(first.result.outcome).toBe('SUCCESS');
    expect(first.audit.policy?.shadow).toEqual({ version: 'candidate-2', decision: 'allow' });
    const second = await refund(r, 20);
    expect(second.result.outcome).toBe('SUCCESS');
    expect(second.audit.policy?.shadow).toEqual({
      version: 'candidate-2',
      decision: 'refuse',
      ruleId: 'refund-support-limit',
    });
    expect(r.effects).toEqual([25, 20]);
    expect(r.seen.shadow).toEqual([['issue_refund', false]]);
    // Where the active policy refuses and the candidate would too, nothing is counted.
    expect((await refund(r, 20)).result.outcome).toBe('POLICY_VIOLATION');
    expect(r.seen.shadow).toEqual([['issue_refund', false]]);
  });

  it('a candidate that throws is recorded as nothing', async () => {
    const r = rig({
      shadow: () => ({
        version: 'broken',
        factsOf: () => [],
        evaluate: () => {
          throw new Error('bug in the candidate');
        },
      }),
    });
    const run = await refund(r, 10);
    expect(run.result.outcome).toBe('SUCCESS');
    expect(run.audit.policy).not.toHaveProperty('shadow');
  });
});
