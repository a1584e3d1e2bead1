import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryTracerProvider } from '../observability/memory-tracer.js';
import { createHarness, PRINCIPAL, stockTool, TRACE_ID, type Harness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function valueOf(registry: Registry, name: string, labels: Record<string, string>): Promise<number> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  const sample = (metric?.values ?? []).find(
    (v) =>
      Object.keys(v.labels).length === Object.keys(labels).length &&
      Object.entries(labels).every(([k, l]) => v.labels[k] === l),
  );
  return sample?.value ?? Number.NaN;
}

describe('executor telemetry on the memory bus', () => {
  it('counts each call once (pipeline or executor refusal), dead letters by reason, and logs with call context', async () => {
    const stock = stockTool();
    h = await createHarness([stock.tool]);
    const registry = new Registry();
    const tracing = new MemoryTracerProvider();
    const ok = await h.request({ sku: 'A', seq: 1, delta: 1 }, { index: 0 });
    const unsigned = await h.request({ sku: 'B', seq: 1, delta: 1 }, { index: 1, principalAssertion: '' });
    const invented = await h.request({ sku: 'C', seq: 1, delta: 1 }, { index: 2, tool: 'adjust_stok' });
    await h.publishCalls([ok, unsigned, invented]);
    await h.publishRaw('junk', Buffer.from('not an event'));
    await h.executor({ instrumentation: { registry, tracer: tracing.getTracer() } }).start();

    const results = await h.read('results', 3);
    await h.read('dlq', 1);
    expect(new Map(results.map((r) => [r.event.callId, r.event.outcome]))).toEqual(
      new Map([
        [ok.callId, 'SUCCESS'],
        [unsigned.callId, 'UNAUTHORIZED'],
        [invented.callId, 'UNKNOWN_TOOL'],
      ]),
    );
    expect(stock.invocations).toHaveLength(1);

    const calls = 'toolgate_tool_calls_total';
    expect(await valueOf(registry, calls, { tool: 'adjust_stock', outcome: 'SUCCESS' })).toBe(1);
    expect(await valueOf(registry, calls, { tool: 'adjust_stock', outcome: 'UNAUTHORIZED' })).toBe(1);
    expect(await valueOf(registry, calls, { tool: 'unknown', outcome: 'UNKNOWN_TOOL' })).toBe(1);
    expect(await valueOf(registry, 'toolgate_dead_letters_total', { reason: 'POISON' })).toBe(1);
    expect(await valueOf(registry, 'toolgate_calls_in_flight', {})).toBe(0);

    // The success's outputs are children of its call span. A refused principal is a run of the
    // pipeline like any other: its call span names the outcome, and no verified principal.
    const span = tracing.spans.find((s) => s.attributes['gen_ai.tool.call.id'] === ok.callId)!;
    expect(span).toMatchObject({ traceId: TRACE_ID, parentSpanId: '00f067aa0ba902b7' });
    expect(span.attributes['toolgate.principal.id']).toBe(PRINCIPAL.id);
    const okResult = results.find((r) => r.event.callId === ok.callId)!;
    expect(okResult.message.headers.traceparent).toBe(`00-${TRACE_ID}-${span.spanId}-01`);
    const refusedSpan = tracing.spans.find((s) => s.attributes['gen_ai.tool.call.id'] === unsigned.callId)!;
    expect(refusedSpan.attributes).toMatchObject({
      'toolgate.outcome': 'UNAUTHORIZED',
      'toolgate.principal.id': 'unverified',
      'error.type': 'INVALID_PRINCIPAL',
    });

    const handled = h.logs.find(
      (l) => l.msg === 'call handled' && 'callId' in l.obj && l.obj.callId === ok.callId,
    );
    expect(handled?.obj).toMatchObject({
      callId: ok.callId,
      taskId: ok.taskId,
      traceId: TRACE_ID,
      topic: h.topics.calls,
      partition: expect.any(Number),
      offset: expect.any(String),
      outcome: 'SUCCESS',
    });
    const poisoned = h.logs.find((l) => l.msg?.startsWith('dead-lettering'));
    expect(poisoned?.obj).toMatchObject({ topic: h.topics.calls, offset: expect.any(String) });
  });
});
