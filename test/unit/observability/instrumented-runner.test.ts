import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { tokenEquivalents } from '../../../libs/cost/token-equivalents.js';
import { instrumentPipeline } from '../../../libs/observability/instrumented-runner.js';
import { createToolgateMetrics } from '../../../libs/observability/metrics.js';
import { knownToolsOf, pipelineObserver } from '../../../libs/observability/pipeline-metrics.js';
import { parseTraceparent } from '../../../libs/observability/trace-context.js';
import { createCallTracing, toolgateTracer } from '../../../libs/observability/tracing.js';
import { GuardPipeline } from '../../../libs/pipeline/guard-pipeline.js';
import { call, context, countingRefundTool, harness, type Harness } from '../pipeline/fixtures.js';
import { MemoryTracerProvider } from './memory-tracer.js';
import { parsePromText } from './prom-text.js';
import { STAGES } from '../../../libs/guards/stages.js';

let h: Harness | undefined;
afterEach(() => {
  h?.close();
  h = undefined;
});

describe('instrumentPipeline', () => {
  it('counts a call in flight while it runs, then records its outcome, latency and span', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started = 0;
    const refund = countingRefundTool({
      execute: async (args) => {
        started += 1;
        await gate;
        return { refund_id: 'R-1', amount: args.amount };
      },
    });
    h = harness([refund.tool]);
    const registry = new Registry();
    const metrics = createToolgateMetrics(registry, { isKnownTool: knownToolsOf(h.registry, h.clock) });
    const provider = new MemoryTracerProvider();
    const tracing = createCallTracing(toolgateTracer(provider));
    const pipeline = new GuardPipeline({ ...h.deps, observer: pipelineObserver(metrics) }, STAGES);
    const runner = instrumentPipeline(pipeline, { metrics, tracing, clock: h.clock });

    const gauge = async () =>
      parsePromText(await registry.metrics()).get('toolgate_calls_in_flight')?.samples[0]?.value;
    const parent = parseTraceparent(`00-${context().traceId}-b7ad6b7169203331-01`);
    const running = runner.run(call({ order_id: 'O-1', amount: 5 }), context(), { parent });
    while (started === 0) await new Promise((r) => setImmediate(r));
    expect(await gauge()).toBe(1);
    await h.clock.advance(250);
    release();
    const ran = await running;

    expect(ran.result.outcome).toBe('SUCCESS');
    expect(started).toBe(1);
    expect(await gauge()).toBe(0);
    const families = parsePromText(await registry.metrics());
    const duration = families.get('toolgate_tool_call_duration_seconds')?.samples ?? [];
    const sum = duration.find((s) => s.name.endsWith('_sum') && s.labels.outcome === 'SUCCESS');
    expect(sum?.labels.tool).toBe('issue_refund');
    expect(sum?.value).toBeCloseTo(0.25);
    const root = provider.spans.find((s) => s.name === 'execute_tool issue_refund');
    expect(root?.traceId).toBe(context().traceId);
    expect(root?.parentSpanId).toBe('b7ad6b7169203331');
    expect(ran.outgoing.spanId).toBe(root?.spanId);
    // The run returns the token equivalents its metrics recorded, by the cost model's rule.
    expect(ran.tokens).toEqual(
      tokenEquivalents(ran.result, { name: 'issue_refund', arguments: { order_id: 'O-1', amount: 5 } }),
    );
    const tokens = families.get('toolgate_tool_call_tokens')?.samples ?? [];
    const tokenSum = (direction: string) =>
      tokens.find((s) => s.name.endsWith('_sum') && s.labels.direction === direction)?.value;
    expect(tokenSum('in')).toBe(ran.tokens.tokensIn);
    expect(tokenSum('out')).toBe(ran.tokens.tokensOut);
    expect(ran.tokens.tokensOut).toBeGreaterThan(0);
  });
});
