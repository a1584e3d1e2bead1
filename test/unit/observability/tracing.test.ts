import { SpanStatusCode } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { ToolgateError } from '../../../libs/core/errors.js';
import {
  parseTraceparent,
  readTraceContext,
  traceHeaders,
} from '../../../libs/observability/trace-context.js';
import { createCallTracing, toolgateTracer } from '../../../libs/observability/tracing.js';
import { GuardPipeline } from '../../../libs/pipeline/guard-pipeline.js';
import { call, context, countingRefundTool, harness, principal, type Harness } from '../pipeline/fixtures.js';
import { MemoryTracerProvider, type RecordedSpan } from './memory-tracer.js';
import { STAGES } from '../../../libs/guards/stages.js';

const INCOMING_TRACE = '0af7651916cd43dd8448eb211c80319c';
const AGENT_SPAN = 'b7ad6b7169203331';

let h: Harness | undefined;
afterEach(() => {
  h?.close();
  h = undefined;
});

function setup(tool = countingRefundTool()) {
  h = harness([tool.tool]);
  const provider = new MemoryTracerProvider();
  const tracing = createCallTracing(toolgateTracer(provider));
  const pipeline = new GuardPipeline(h.deps, STAGES);
  return { tool, provider, tracing, pipeline, h };
}

const byName = (spans: readonly RecordedSpan[], prefix: string) =>
  spans.filter((s) => s.name.startsWith(prefix));
const callSpan = (spans: readonly RecordedSpan[]) => {
  const found = byName(spans, 'execute_tool ');
  expect(found).toHaveLength(1);
  return found[0]!;
};

describe('call and stage spans carry the incoming trace id', () => {
  it('with a traceparent from the agent: every span is in its trace, the call span is its child', async () => {
    const { provider, tracing, pipeline, tool } = setup();
    const ctx = context({ traceId: INCOMING_TRACE });
    const parent = parseTraceparent(`00-${INCOMING_TRACE}-${AGENT_SPAN}-01`);
    const run = await tracing.run(pipeline, call({ order_id: 'O-1', amount: 5 }), ctx, { parent });

    expect(run.result.outcome).toBe('SUCCESS');
    expect(tool.calls()).toBe(1);
    const spans = provider.spans;
    expect(spans.length).toBeGreaterThan(8);
    for (const span of spans) expect(span.traceId, span.name).toBe(INCOMING_TRACE);
    expect(run.audit.traceId).toBe(INCOMING_TRACE); // the join key between traces, audit and cases

    const root = callSpan(spans);
    expect(root).toMatchObject({
      name: 'execute_tool issue_refund',
      parentSpanId: AGENT_SPAN,
      parentIsRemote: true,
      status: { code: SpanStatusCode.UNSET },
    });
    expect(root.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'issue_refund',
      'gen_ai.tool.version': '1.0.0',
      'toolgate.outcome': 'SUCCESS',
      'toolgate.tenant': 't1',
      'toolgate.principal.id': principal().id,
      'toolgate.retry_count': 0,
      'toolgate.tool_invocations': 1,
    });
    expect(root.attributes['toolgate.idempotency_key']).toBe(run.result.idempotencyKey);
    expect(JSON.stringify(root.attributes)).not.toContain('O-1'); // arguments are not attributes

    // In the order they ended: the idempotency layer's span wraps the two steps inside it.
    const stages = byName(spans, 'toolgate.stage ');
    expect(stages.map((s) => s.name.slice('toolgate.stage '.length))).toEqual([
      'resolve',
      'validate-input',
      'authorize',
      'rate-limit',
      'business-rules',
      'execute',
      'validate-output',
      'idempotency',
    ]);
    for (const s of stages) {
      expect(s.parentSpanId).toBe(root.spanId);
      expect(s.attributes['toolgate.stage.decision']).toBe('pass');
    }
    const attempts = byName(spans, 'toolgate.attempt');
    expect(attempts).toHaveLength(1);
    expect(attempts[0]!.parentSpanId).toBe(stages.find((s) => s.name.endsWith('execute'))!.spanId);

    // What the executor puts on its outputs makes the consumers children of the call span.
    expect(run.outgoing).toEqual({ traceId: INCOMING_TRACE, spanId: root.spanId, flags: 1 });
    expect(readTraceContext(traceHeaders(run.outgoing.traceId, run.outgoing.spanId))?.spanId).toBe(
      root.spanId,
    );
  });

  it("without a traceparent (or with one from another trace) the trace id is still the call's", async () => {
    const { provider, tracing, pipeline } = setup();
    const ctx = context({ traceId: INCOMING_TRACE });
    await tracing.run(pipeline, call({ order_id: 'O-2', amount: 5 }), ctx);
    const other = parseTraceparent(`00-${'1'.repeat(32)}-${AGENT_SPAN}-01`);
    await tracing.run(pipeline, call({ order_id: 'O-3', amount: 5 }), ctx, { parent: other });
    expect(provider.spans.length).toBeGreaterThan(16);
    for (const span of provider.spans) expect(span.traceId).toBe(INCOMING_TRACE);
    for (const root of byName(provider.spans, 'execute_tool ')) {
      expect(root.parentIsRemote).toBe(true);
      expect(root.parentSpanId).not.toBe(AGENT_SPAN);
    }
  });

  it('the agent\'s "not sampled" flag is passed on to the call span', async () => {
    const { provider, tracing, pipeline } = setup();
    const parent = parseTraceparent(`00-${INCOMING_TRACE}-${AGENT_SPAN}-00`);
    const run = await tracing.run(pipeline, call({ order_id: 'O-4', amount: 5 }), context(), { parent });
    expect(callSpan(provider.spans).traceFlags).toBe(0);
    expect(run.outgoing.flags).toBe(0);
  });
});

describe('what the spans say about the call', () => {
  it('a refusal at authorization: stage spans stop there, the tool never ran, the call is not an error', async () => {
    const { provider, tracing, pipeline, tool } = setup();
    const ctx = context({ principal: principal({ scopes: [] }) });
    const run = await tracing.run(pipeline, call({ order_id: 'O-5', amount: 5 }), ctx);
    expect(run.result.outcome).toBe('UNAUTHORIZED');
    expect(tool.calls()).toBe(0);
    const stages = byName(provider.spans, 'toolgate.stage ');
    expect(stages.map((s) => s.name)).toEqual([
      'toolgate.stage resolve',
      'toolgate.stage validate-input',
      'toolgate.stage authorize',
    ]);
    expect(stages[2]!.attributes).toMatchObject({
      'toolgate.stage.decision': 'refuse',
      'error.type': 'UNAUTHORIZED',
    });
    const root = callSpan(provider.spans);
    expect(root.status.code).toBe(SpanStatusCode.UNSET);
    expect(root.attributes).toMatchObject({
      'toolgate.outcome': 'UNAUTHORIZED',
      'error.type': 'UNAUTHORIZED',
    });
    expect(byName(provider.spans, 'toolgate.attempt')).toHaveLength(0);
  });

  it('retries: one attempt span per invocation under the execute stage, failures marked', async () => {
    let n = 0;
    const tool = countingRefundTool({
      retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 10 },
      execute: (args) => {
        n += 1;
        if (n < 3) return Promise.reject(new ToolgateError('SERVER_ERROR', 'payments hiccup'));
        return Promise.resolve({ refund_id: 'R-9', amount: args.amount });
      },
    });
    const { provider, tracing, pipeline, h: hh } = setup(tool);
    let settled = false;
    const running = tracing.run(pipeline, call({ order_id: 'O-6', amount: 5 }), context()).finally(() => {
      settled = true;
    });
    while (!settled) await hh.clock.advance(1_000);
    const run = await running;
    expect(run.result.outcome).toBe('SUCCESS');
    const attempts = byName(provider.spans, 'toolgate.attempt');
    expect(
      attempts.map((a) => [a.attributes['toolgate.attempt'], a.attributes['toolgate.attempt.result']]),
    ).toEqual([
      [1, 'SERVER_ERROR'],
      [2, 'SERVER_ERROR'],
      [3, 'ok'],
    ]);
    expect(attempts.map((a) => a.status.code)).toEqual([
      SpanStatusCode.ERROR,
      SpanStatusCode.ERROR,
      SpanStatusCode.UNSET,
    ]);
    expect(callSpan(provider.spans).attributes['toolgate.retry_count']).toBe(2);
  });

  it('an execution error marks the call span ERROR', async () => {
    const tool = countingRefundTool({
      execute: () => Promise.reject(new ToolgateError('CALLER_ERROR', 'order O-7 is closed')),
    });
    const { provider, tracing, pipeline } = setup(tool);
    const run = await tracing.run(pipeline, call({ order_id: 'O-7', amount: 5 }), context());
    expect(run.result.outcome).toBe('EXECUTION_ERROR');
    expect(callSpan(provider.spans).status).toEqual({ code: SpanStatusCode.ERROR, message: 'CALLER_ERROR' });
  });

  it('an unknown tool: the span names what the model asked for, clipped', async () => {
    const { provider, tracing, pipeline } = setup();
    const name = `x${'y'.repeat(400)}`;
    await tracing.run(pipeline, call({}, { name }), context());
    const root = callSpan(provider.spans);
    expect(String(root.attributes['gen_ai.tool.name'])).toHaveLength(256);
    expect(root.attributes['toolgate.outcome']).toBe('UNKNOWN_TOOL');
  });
});

describe('without an SDK or outside a traced run', () => {
  it('the global no-op API: runs normally, nothing recorded, outgoing ids still valid', async () => {
    h = harness([countingRefundTool().tool]);
    const tracing = createCallTracing(toolgateTracer());
    const pipeline = new GuardPipeline(h.deps, STAGES);
    const parent = parseTraceparent(`00-${INCOMING_TRACE}-${AGENT_SPAN}-01`);
    const run = await tracing.run(pipeline, call({ order_id: 'O-8', amount: 5 }), context(), { parent });
    expect(run.result.outcome).toBe('SUCCESS');
    expect(run.outgoing.traceId).toBe(INCOMING_TRACE);
    expect(run.outgoing.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(run.outgoing.spanId).not.toBe(AGENT_SPAN);
  });

  it('a call span that records nothing runs the pipeline without the per-layer hook', async () => {
    h = harness([countingRefundTool().tool]);
    const pipeline = new GuardPipeline(h.deps, STAGES);
    const hooks: unknown[] = [];
    const watched = {
      run: (...args: Parameters<GuardPipeline['run']>) => {
        hooks.push(args[2]?.aroundLayer);
        return pipeline.run(...args);
      },
    };
    const noop = await createCallTracing(toolgateTracer()).run(
      watched,
      call({ order_id: 'O-10', amount: 5 }),
      context(),
    );
    expect(noop.result.outcome).toBe('SUCCESS');
    const provider = new MemoryTracerProvider();
    await createCallTracing(toolgateTracer(provider)).run(
      watched,
      call({ order_id: 'O-11', amount: 5 }),
      context(),
    );
    expect(hooks[0]).toBeUndefined();
    expect(typeof hooks[1]).toBe('function');
    expect(byName(provider.spans, 'toolgate.stage ').length).toBeGreaterThan(0);
  });

  it('a plain pipeline.run, outside a traced run, records no spans (no orphan traces)', async () => {
    const { provider, pipeline } = setup();
    const { result } = await pipeline.run(call({ order_id: 'O-9', amount: 5 }), context());
    expect(result.outcome).toBe('SUCCESS');
    expect(provider.spans).toEqual([]);
  });
});
