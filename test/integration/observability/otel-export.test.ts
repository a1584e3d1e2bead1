import { trace } from '@opentelemetry/api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  readTraceExportSettings,
  startTraceExport,
  type TraceExport,
} from '../../../libs/observability/otel-export.js';
import { createCallTracing, toolgateTracer } from '../../../libs/observability/tracing.js';
import { GuardPipeline } from '../../../libs/pipeline/guard-pipeline.js';
import { call, context, countingRefundTool, harness, type Harness } from '../../unit/pipeline/fixtures.js';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';
import { STAGES } from '../../../libs/guards/stages.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';

let receiver: OtlpReceiver;
let exporting: TraceExport | null = null;
let h: Harness | undefined;

beforeEach(async () => {
  receiver = await startOtlpReceiver();
});

afterEach(async () => {
  await exporting?.shutdown();
  exporting = null;
  h?.close();
  h = undefined;
  await receiver.close();
});

/** One refund through a real guard pipeline whose stages are traced on the global provider. */
async function runOneCall(): Promise<number> {
  const tool = countingRefundTool();
  h = harness([tool.tool]);
  const tracing = createCallTracing(toolgateTracer());
  const run = await tracing.run(
    new GuardPipeline(h.deps, STAGES),
    call({ order_id: 'O-1', amount: 5 }),
    context({ traceId: TRACE_ID }),
  );
  expect(run.result.outcome).toBe('SUCCESS');
  return tool.calls();
}

describe('trace export in-process (OTLP/HTTP to a local receiver)', () => {
  it('http/json: the call and stage spans arrive with service.name, in the call trace', async () => {
    exporting = startTraceExport({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'toolgate-in-process',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test,k8s.pod.name=executor-0',
      },
      defaultServiceName: 'not-this-one',
    });
    expect(exporting?.settings.url).toBe(`${receiver.endpoint}/v1/traces`);
    expect(await runOneCall()).toBe(1);
    await exporting!.forceFlush();

    expect(receiver.requests.map((r) => r.path)).toContain('/v1/traces');
    const spans = receiver.spans();
    const callSpans = spans.filter((s) => s.name === 'execute_tool issue_refund');
    expect(callSpans).toHaveLength(1);
    const callSpan = callSpans[0]!;
    expect(callSpan).toMatchObject({
      serviceName: 'toolgate-in-process',
      scope: 'toolgate',
      traceId: TRACE_ID,
    });
    expect(callSpan.attributes['toolgate.outcome']).toBe('SUCCESS');
    const stages = spans.filter((s) => s.name.startsWith('toolgate.stage '));
    expect(stages.map((s) => s.name)).toContain('toolgate.stage execute');
    for (const stage of stages) expect(stage.parentSpanId).toBe(callSpan.spanId);
    for (const span of spans) expect(span.traceId, span.name).toBe(TRACE_ID);
  });

  it('http/protobuf (the default protocol): a protobuf body that names the spans and the service', async () => {
    exporting = startTraceExport({
      env: {
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.endpoint}/v1/traces`,
        OTEL_SERVICE_NAME: 'proto-svc',
      },
    });
    expect(exporting?.settings.protocol).toBe('http/protobuf');
    await runOneCall();
    await exporting!.forceFlush();

    expect(receiver.requests.length).toBeGreaterThan(0);
    for (const r of receiver.requests) {
      expect(r.path).toBe('/v1/traces');
      expect(r.contentType).toBe('application/x-protobuf');
    }
    // Protobuf strings are length-prefixed UTF-8: the names appear verbatim in the body.
    const bodies = Buffer.concat(receiver.requests.map((r) => r.body));
    expect(bodies.includes('execute_tool issue_refund')).toBe(true);
    expect(bodies.includes('proto-svc')).toBe(true);
    expect(bodies.includes(Buffer.from(TRACE_ID, 'hex'))).toBe(true);
  });

  it('without an endpoint nothing is registered: spans are no-ops and nothing is sent', async () => {
    for (const env of [{}, { OTEL_SERVICE_NAME: 'x' }, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }]) {
      expect(readTraceExportSettings(env)).toBeNull();
      expect(startTraceExport({ env })).toBeNull();
    }
    for (const env of [
      { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_TRACES_EXPORTER: 'none' },
      { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_SDK_DISABLED: 'true' },
    ]) {
      expect(startTraceExport({ env })).toBeNull();
    }
    expect(trace.getTracer('probe').startSpan('probe').isRecording()).toBe(false);
    await runOneCall();
    expect(receiver.requests).toHaveLength(0);
  });

  it('shutdown exports what is queued and unregisters the provider', async () => {
    exporting = startTraceExport({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        // Far longer than the test: only the shutdown can have sent the spans.
        OTEL_BSP_SCHEDULE_DELAY: '3600000',
      },
    });
    expect(exporting?.settings.serviceName).toBe('toolgate');
    await runOneCall();
    expect(receiver.requests).toHaveLength(0);
    await exporting!.shutdown();
    expect(receiver.spans().filter((s) => s.name === 'execute_tool issue_refund')).toHaveLength(1);
    expect(trace.getTracer('probe').startSpan('probe').isRecording()).toBe(false);
    // A second export can be registered after the first shut down.
    exporting = startTraceExport({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint } });
    expect(trace.getTracer('probe').startSpan('probe').isRecording()).toBe(true);
  });
});

describe('readTraceExportSettings: the standard variables', () => {
  const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };

  it('appends /v1/traces to the base endpoint; a per-signal endpoint is used as given', () => {
    expect(readTraceExportSettings(on)?.url).toBe('http://collector:4318/v1/traces');
    expect(readTraceExportSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://c.example/otlp/' })?.url).toBe(
      'https://c.example/otlp/v1/traces',
    );
    expect(
      readTraceExportSettings({ ...on, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://other:9999/custom' })?.url,
    ).toBe('http://other:9999/custom');
    expect(readTraceExportSettings({ OTEL_TRACES_EXPORTER: 'otlp' })?.url).toBe(
      'http://localhost:4318/v1/traces',
    );
  });

  it('service.name: OTEL_SERVICE_NAME, else OTEL_RESOURCE_ATTRIBUTES, else the default', () => {
    expect(readTraceExportSettings(on, 'toolgate-executor')?.serviceName).toBe('toolgate-executor');
    const attrs = { ...on, OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-attrs,team=pay%20ments' };
    expect(readTraceExportSettings(attrs, 'dflt')).toMatchObject({
      serviceName: 'from-attrs',
      resourceAttributes: { 'service.name': 'from-attrs', team: 'pay ments' },
    });
    expect(readTraceExportSettings({ ...attrs, OTEL_SERVICE_NAME: 'explicit' }, 'dflt')?.serviceName).toBe(
      'explicit',
    );
  });

  it('defaults: http/protobuf, parent-based always-on sampling, the SDK batch limits', () => {
    expect(readTraceExportSettings(on)).toMatchObject({
      protocol: 'http/protobuf',
      sampler: 'parentbased_always_on',
      samplerRatio: 1,
      batch: {
        scheduledDelayMillis: 5000,
        exportTimeoutMillis: 30000,
        maxQueueSize: 2048,
        maxExportBatchSize: 512,
      },
    });
    const tuned = readTraceExportSettings({
      ...on,
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_BSP_SCHEDULE_DELAY: '1000',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
    });
    expect(tuned).toMatchObject({
      sampler: 'parentbased_traceidratio',
      samplerRatio: 0.25,
      protocol: 'http/json',
    });
    expect(tuned?.batch.scheduledDelayMillis).toBe(1000);
  });

  it('refuses what it cannot honour, naming the variable (never its value)', () => {
    const refused = (env: Record<string, string>): string => {
      try {
        readTraceExportSettings({ ...on, ...env });
      } catch (err) {
        return (err as Error).message;
      }
      throw new Error(`accepted ${JSON.stringify(env)}`);
    };
    expect(refused({ OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' })).toBe(
      'OTEL_EXPORTER_OTLP_ENDPOINT: not an absolute URL',
    );
    expect(refused({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toMatch(/^OTEL_EXPORTER_OTLP_PROTOCOL: /);
    expect(refused({ OTEL_TRACES_EXPORTER: 'zipkin' })).toMatch(/^OTEL_TRACES_EXPORTER: /);
    expect(refused({ OTEL_TRACES_SAMPLER: 'sometimes' })).toMatch(/^OTEL_TRACES_SAMPLER: /);
    expect(refused({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' })).toMatch(
      /^OTEL_TRACES_SAMPLER_ARG: /,
    );
    expect(refused({ OTEL_BSP_MAX_QUEUE_SIZE: '-1' })).toMatch(/^OTEL_BSP_MAX_QUEUE_SIZE: /);
    expect(refused({ OTEL_RESOURCE_ATTRIBUTES: 'novalue' })).toMatch(/^OTEL_RESOURCE_ATTRIBUTES: /);
    expect(
      refused({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://u:secret@c:4318', OTEL_TRACES_SAMPLER: 'x' }),
    ).not.toContain('secret');
  });
});
