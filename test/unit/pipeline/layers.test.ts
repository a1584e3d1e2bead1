import { afterEach, describe, expect, it } from 'vitest';
import { STAGES } from '../../../libs/guards/stages.js';
import { INGRESS_STAGES } from '../../../libs/pipeline/guard-pipeline.js';

/** The steps an in-process run (its caller vouches for the principal) passes through. */
const TRUSTED_STAGES = STAGES.filter((s) => !INGRESS_STAGES.includes(s.name));
const RESOLVE = TRUSTED_STAGES[0]!;
import { GuardPipeline } from '../../../libs/pipeline/guard-pipeline.js';
import type { Layer, PipelineStep, Stage } from '../../../libs/pipeline/stage.js';
import { CONTINUE } from '../../../libs/pipeline/stage.js';
import type { PeekResult } from '../../../libs/ports/idempotency-store.js';
import type { MemoryIdempotencyStore } from '../../../libs/adapters/memory/memory-idempotency-store.js';
import { call, context, countingRefundTool, harness } from './fixtures.js';
import type { Harness } from './fixtures.js';

/**
 * The pipeline as layers: the idempotency layer wraps execution and output validation and settles
 * its claim in one place, so nothing that throws inside it can leave the claim in flight; and the
 * composer enforces `next()` at most once.
 */

let h: Harness | undefined;
afterEach(() => {
  h?.close();
  h = undefined;
});

/** The guard pipeline with the step named `name` replaced. */
function replacing(name: string, step: PipelineStep): PipelineStep[] {
  const steps = STAGES.map((s) => (s.name === name ? step : s));
  expect(steps).toContain(step);
  return steps;
}

const throwing = (name: Stage['name'], message: string): Stage => ({
  name,
  run: () => Promise.reject(new Error(message)),
});

async function peek(hh: Harness, key: string | undefined): Promise<PeekResult> {
  expect(key).toBeDefined();
  return (hh.deps.idempotency as MemoryIdempotencyStore).peek(key!);
}

describe('the idempotency layer settles its claim whatever happens inside it', () => {
  it('output validation throws after the tool ran: UNRESOLVED, the claim completed as UNRESOLVED, a duplicate does not run', async () => {
    const refund = countingRefundTool();
    h = harness([refund.tool]);
    const pipeline = new GuardPipeline(
      h.deps,
      replacing('validate-output', throwing('validate-output', 'boom')),
    );
    const first = await pipeline.run(call({ order_id: 'O-1', amount: 5 }), context());
    expect(first.result.outcome).toBe('UNRESOLVED');
    expect(refund.calls()).toBe(1);
    expect(await peek(h, first.result.idempotencyKey)).toMatchObject({
      kind: 'completed',
      stored: { outcome: 'UNRESOLVED' },
    });
    expect(first.audit.decisions.map((d) => `${d.stage}:${d.decision}`)).toEqual([
      'resolve:pass',
      'validate-input:pass',
      'authorize:pass',
      'rate-limit:pass',
      'business-rules:pass',
      'idempotency:pass',
      'execute:pass',
      'validate-output:refuse',
    ]);

    const again = await pipeline.run(call({ order_id: 'O-1', amount: 5 }, { id: 'call-2' }), context());
    expect(again.result.outcome).toBe('UNRESOLVED');
    expect(refund.calls()).toBe(1);
  });

  it('the tool throws after its effect: UNRESOLVED, the claim completed as UNRESOLVED, never in flight', async () => {
    let effects = 0;
    const refund = countingRefundTool({
      retrySafety: { kind: 'none' },
      execute: () => {
        effects += 1;
        return Promise.reject(new Error('connection reset after the write'));
      },
    });
    h = harness([refund.tool]);
    const pipeline = new GuardPipeline(h.deps, STAGES);
    const run = await pipeline.run(call({ order_id: 'O-1', amount: 5 }), context());
    expect(run.result.outcome).toBe('UNRESOLVED');
    expect(effects).toBe(1);
    expect(await peek(h, run.result.idempotencyKey)).toMatchObject({
      kind: 'completed',
      stored: { outcome: 'UNRESOLVED' },
    });
  });

  it('the execute step throws before invoking the tool: refused, the claim released, a retry runs the tool', async () => {
    const refund = countingRefundTool();
    h = harness([refund.tool]);
    const broken = new GuardPipeline(h.deps, replacing('execute', throwing('execute', 'wiring defect')));
    const first = await broken.run(call({ order_id: 'O-1', amount: 5 }), context());
    expect(first.result.outcome).toBe('EXECUTION_ERROR');
    expect(refund.calls()).toBe(0);
    expect(await peek(h, first.result.idempotencyKey)).toEqual({ kind: 'absent' });

    const retried = await new GuardPipeline(h.deps, STAGES).run(
      call({ order_id: 'O-1', amount: 5 }),
      context(),
    );
    expect(retried.result.outcome).toBe('SUCCESS');
    expect(refund.calls()).toBe(1);
  });

  it('a refused output (BAD_OUTPUT) is completed as EXECUTION_ERROR: a duplicate repeats the refusal, not the effect', async () => {
    const refund = countingRefundTool({
      execute: () => Promise.resolve({ refund_id: 7 } as never),
    });
    h = harness([refund.tool]);
    const pipeline = new GuardPipeline(h.deps, STAGES);
    const first = await pipeline.run(call({ order_id: 'O-1', amount: 5 }), context());
    expect(first.result.error?.code).toBe('BAD_OUTPUT');
    expect(await peek(h, first.result.idempotencyKey)).toMatchObject({
      kind: 'completed',
      stored: { outcome: 'EXECUTION_ERROR', result: { code: 'BAD_OUTPUT' } },
    });
  });

  it('a throw at any point inside the layer, 200 times at random: the claim is never left in flight', async () => {
    const points = ['execute-before', 'tool-after-effect', 'validate-output'] as const;
    // Every run gets fresh stores and breakers; the policy, the same for every run's tool, is built once.
    const first = harness([countingRefundTool().tool]);
    const policy = first.deps.policy;
    first.close();
    for (let i = 0; i < 200; i++) {
      const point = points[Math.floor(Math.random() * points.length)]!;
      let effects = 0;
      const refund = countingRefundTool({
        retrySafety: { kind: 'none' },
        execute: (args) => {
          effects += 1;
          if (point === 'tool-after-effect') return Promise.reject(new Error('lost the answer'));
          return Promise.resolve({ refund_id: `R-${i}`, amount: args.amount });
        },
      });
      const hh = harness([refund.tool], { policy });
      try {
        const steps =
          point === 'execute-before'
            ? STAGES.map((s) => (s.name === 'execute' ? throwing('execute', 'x') : s))
            : point === 'validate-output'
              ? STAGES.map((s) => (s.name === 'validate-output' ? throwing('validate-output', 'x') : s))
              : STAGES;
        const run = await new GuardPipeline(hh.deps, steps).run(
          call({ order_id: `O-${i}`, amount: 1 + (i % 40) }),
          context(),
        );
        const stored = await peek(hh, run.result.idempotencyKey);
        expect(stored.kind, `${point}: ${run.result.outcome}`).not.toBe('in-flight');
        if (effects > 0) {
          expect(run.result.outcome).toBe('UNRESOLVED');
          expect(stored).toMatchObject({ kind: 'completed', stored: { outcome: 'UNRESOLVED' } });
        } else {
          expect(stored).toEqual({ kind: 'absent' });
        }
      } finally {
        hh.close();
      }
    }
  });
});

describe('the composer enforces the onion', () => {
  it('a layer that calls next() twice is refused INTERNAL; the layers inside it ran once', async () => {
    const refund = countingRefundTool();
    h = harness([refund.tool]);
    let innerRuns = 0;
    const greedy: Layer = {
      name: 'business-rules',
      async wrap(_state, _deps, next) {
        await next();
        return next();
      },
    };
    const counting: Stage = { name: 'idempotency', run: () => ((innerRuns += 1), Promise.resolve(CONTINUE)) };
    const { result, audit } = await new GuardPipeline(h.deps, [RESOLVE, greedy, counting]).run(
      call({ order_id: 'O-1', amount: 5 }),
      context(),
    );
    expect(result.error?.code).toBe('INTERNAL');
    expect(innerRuns).toBe(1);
    expect(audit.decisions.at(-1)).toMatchObject({
      stage: 'business-rules',
      decision: 'refuse',
      code: 'INTERNAL',
    });
  });

  it('a layer that claims done without running the layers inside it is refused INTERNAL; nothing inside ran', async () => {
    const refund = countingRefundTool();
    h = harness([refund.tool]);
    const skipping: Layer = { name: 'idempotency', wrap: () => Promise.resolve({ kind: 'done' }) };
    const { result } = await new GuardPipeline(h.deps, replacing('idempotency', skipping)).run(
      call({ order_id: 'O-1', amount: 5 }),
      context(),
    );
    expect(result.outcome).toBe('EXECUTION_ERROR');
    expect(result.error?.code).toBe('INTERNAL');
    expect(refund.calls()).toBe(0);
  });

  it('an observer hook that throws or never calls inner changes nothing: every step still runs once', async () => {
    const refund = countingRefundTool();
    h = harness([refund.tool]);
    const pipeline = new GuardPipeline(h.deps, STAGES);
    let hooked = 0;
    const run = await pipeline.run(call({ order_id: 'O-1', amount: 5 }), context(), {
      aroundLayer: (name, _state, inner) => {
        hooked += 1;
        if (name === 'authorize') throw new Error('observer bug');
        if (name === 'rate-limit') return Promise.resolve('skipped');
        return inner();
      },
    });
    expect(run.result.outcome).toBe('SUCCESS');
    expect(refund.calls()).toBe(1);
    expect(hooked).toBe(TRUSTED_STAGES.length);
    expect(run.audit.decisions).toHaveLength(TRUSTED_STAGES.length);
  });
});
