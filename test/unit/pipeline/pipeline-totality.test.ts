import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { OUTCOMES } from '../../../libs/core/outcome.js';
import type { ExecutionContext, NormalizedToolCall, Principal } from '../../../libs/core/types.js';
import { resolveStage } from '../../../libs/guards/resolve.js';
import { GuardPipeline } from '../../../libs/pipeline/guard-pipeline.js';
import type { StageResult } from '../../../libs/pipeline/stage.js';
import { REFUND_RULES, countingRefundTool, harness } from './fixtures.js';
import { STAGES } from '../../../libs/guards/stages.js';

const refund = countingRefundTool({
  rateLimit: { capacity: 3, refillPerSecond: 1, per: ['principal', 'tenant'] },
});
const h = harness([refund.tool], { rules: REFUND_RULES });
const pipeline = new GuardPipeline(h.deps, STAGES);
afterAll(() => h.close());

const CURRENT: { value: unknown; thrown: unknown } = { value: undefined, thrown: undefined };

const REFUSED_BEFORE_TOOL = new Set([
  'UNKNOWN_TOOL',
  'SCHEMA_INVALID',
  'UNAUTHORIZED',
  'RATE_LIMITED',
  'POLICY_VIOLATION',
]);

const name = fc.oneof(
  { weight: 20, arbitrary: fc.constant('issue_refund') },
  fc.constant('issue_refnd'),
  fc.string({ maxLength: 30 }),
);
const anyValue = fc.oneof(
  fc.jsonValue(),
  fc.constant(undefined),
  fc.constant(Number.NaN),
  fc.bigInt(),
  fc.func(fc.anything()),
  fc.date(),
);
const args = fc.oneof(
  fc.record(
    {
      order_id: fc.oneof({ weight: 5, arbitrary: fc.constant('O-1') }, fc.string()),
      amount: fc.oneof({ weight: 5, arbitrary: fc.integer({ min: -10, max: 120 }) }, fc.double(), anyValue),
      reason: fc.string(),
      approved_by: fc.constant('manager'),
      role: fc.constant('admin'),
    },
    { requiredKeys: [] },
  ),
  {
    weight: 4,
    arbitrary: fc.record({ order_id: fc.constant('O-1'), amount: fc.integer({ min: 1, max: 49 }) }),
  },
  fc.dictionary(fc.string({ maxLength: 12 }), anyValue, { maxKeys: 6 }),
);
const grants = (common: string[]) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constant(common) },
    fc.array(fc.oneof(fc.constantFrom(...common), fc.string()), { maxLength: 4 }),
  );
const tenant = fc.oneof(
  { weight: 20, arbitrary: fc.constant('t1') },
  fc.constant('t2'),
  fc.string({ maxLength: 8 }),
);
const principal: fc.Arbitrary<Principal> = fc.record({
  id: fc.oneof(fc.constant('agent-7'), fc.string({ maxLength: 10 })),
  tenant,
  kind: fc.constantFrom('user', 'agent', 'service'),
  scopes: grants(['refunds:write']),
  roles: grants(['support', 'manager']),
});
const malformedPrincipal = fc.constantFrom(undefined, null, {}, { id: 7 }, 'root') as fc.Arbitrary<unknown>;
const context: fc.Arbitrary<ExecutionContext> = fc.record({
  principal: fc.oneof(
    { weight: 12, arbitrary: principal },
    { weight: 1, arbitrary: malformedPrincipal },
  ) as fc.Arbitrary<Principal>,
  tenant,
  taskId: fc.oneof(fc.constant('task-1'), fc.string({ maxLength: 10 })),
  step: fc.oneof({ weight: 8, arbitrary: fc.nat(1000) }, fc.integer(), fc.double()),
  index: fc.oneof({ weight: 8, arbitrary: fc.nat(10) }, fc.integer()),
  traceId: fc.string({ maxLength: 32 }),
});
const toolCall: fc.Arbitrary<NormalizedToolCall> = fc.record(
  {
    id: fc.string({ minLength: 1, maxLength: 20 }),
    name,
    arguments: args as fc.Arbitrary<Record<string, unknown>>,
    version: fc.oneof(
      { weight: 10, arbitrary: fc.constant('1.0.0') },
      fc.constant('9.9.9'),
      fc.string({ maxLength: 6 }),
    ),
  },
  { requiredKeys: ['id', 'name', 'arguments'] },
);
const key = fc.oneof({ weight: 9, arbitrary: fc.constant(undefined) }, fc.string({ maxLength: 70 }));

describe('GuardPipeline.run is total', () => {
  it('never throws, and yields exactly one result and one audit record for the call id', async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(toolCall, context, key, async (c, ctx, idempotencyKey) => {
        const before = refund.calls();
        const run = await pipeline.run(c, ctx, idempotencyKey === undefined ? {} : { idempotencyKey });
        const ran = refund.calls() - before;
        expect(run.result.callId).toBe(c.id);
        expect(run.audit.callId).toBe(c.id);
        expect(OUTCOMES).toContain(run.result.outcome);
        expect(run.audit.outcome).toBe(run.result.outcome);
        expect(ran).toBe(run.result.toolInvocations);
        expect(ran).toBeLessThanOrEqual(1);
        if (REFUSED_BEFORE_TOOL.has(run.result.outcome)) expect(ran).toBe(0);
        if (run.result.outcome !== 'SUCCESS' && run.result.outcome !== 'DUPLICATE') {
          expect(run.result.error?.message).toBeTruthy();
        }
        // Nothing but allow-listed argument values ever reaches the audit record.
        for (const [k, v] of Object.entries(run.audit.arguments)) {
          if (k !== 'order_id' && k !== 'amount') expect(v).toBe('[redacted]');
        }
        seen.add(run.result.outcome);
        await h.clock.advance(200);
      }),
      { numRuns: 300 },
    );
    // The generators must reach every stage, or the property says little about the later ones.
    for (const outcome of ['SUCCESS', 'UNKNOWN_TOOL', 'SCHEMA_INVALID', 'UNAUTHORIZED', 'RATE_LIMITED']) {
      expect(seen).toContain(outcome);
    }
  });

  it('stays total when a stage throws or returns anything at all, and when the observer throws', async () => {
    const hostile = new GuardPipeline(
      {
        ...h.deps,
        observer: {
          onStage: () => {
            throw new Error('observer down');
          },
        },
      },
      [
        { name: 'resolve', run: resolveStage },
        { name: 'validate-input', run: () => Promise.resolve(CURRENT.value as StageResult) },
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- stages may throw non-Errors; run() must survive it
        { name: 'authorize', run: () => Promise.reject(CURRENT.thrown) },
      ],
    );
    await fc.assert(
      fc.asyncProperty(
        toolCall,
        context,
        fc.anything(),
        fc.anything(),
        fc.boolean(),
        async (c, ctx, value, thrown, pass) => {
          CURRENT.value = pass ? { kind: 'continue' } : value;
          CURRENT.thrown = thrown;
          const run = await hostile.run(c, ctx);
          expect(run.result.callId).toBe(c.id);
          expect(OUTCOMES).toContain(run.result.outcome);
          expect(run.result.outcome).not.toBe('SUCCESS');
          expect(run.audit.decisions.at(-1)?.decision).toBe('refuse');
        },
      ),
      { numRuns: 200 },
    );
  });
});
