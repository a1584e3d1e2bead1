import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { createExecutorStack, type ExecutorStack } from '../executor/executor-stack.js';
import { startExecutorProcess, type ExecutorProcess } from '../executor/executor-process.js';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';

const SERVICE_NAME = 'toolgate-executor-otel-test';
/** The port of the OTLP/HTTP default endpoint, http://localhost:4318. */
const DEFAULT_OTLP_PORT = 4318;
/** Far longer than the test: spans can only arrive through the flush on SIGTERM. */
const NEVER_MS = '3600000';

let stack: ExecutorStack;
const receivers: OtlpReceiver[] = [];
const children: ExecutorProcess[] = [];

beforeAll(async () => {
  stack = await createExecutorStack('otel_export');
});

afterAll(async () => {
  for (const c of children) {
    if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
  }
  await Promise.all(receivers.map((r) => r.close()));
  await stack.close();
});

async function receiver(): Promise<OtlpReceiver> {
  const r = await startOtlpReceiver();
  receivers.push(r);
  return r;
}

/** Starts an executor process (services/executor/main.ts) on the stack with `otel` added to its environment. */
async function executor(id: string, otel: Record<string, string>): Promise<ExecutorProcess> {
  const child = startExecutorProcess(id, {
    ...stack.serviceEnv(id),
    TOOLGATE_CATALOG_MODULE: fileURLToPath(new URL('../executor/ledger-catalog.ts', import.meta.url)),
    LOG_LEVEL: 'info',
    ...otel,
  });
  children.push(child);
  await child.ready;
  return child;
}

let published = 0;

/** Publishes one call, waits for its result on the results topic, and returns the call's trace id. */
async function oneCall(ref: string): Promise<string> {
  const request = await stack.request({ key: ref, seq: 0, ref });
  await stack.publishCalls([request]);
  published += 1;
  // The topic holds one result per call published so far (each test's call runs to a result).
  const results = await stack.read('results', published);
  const mine = results.filter((r) => r.event.callId === request.callId);
  expect(mine.map((r) => r.event.outcome)).toEqual(['SUCCESS']);
  return request.traceId;
}

async function stop(child: ExecutorProcess): Promise<void> {
  child.child.kill('SIGTERM');
  const exit = await child.exited;
  expect(exit.code, child.output.slice(-10).join('\n')).toBe(0);
}

describe('the executor process exports its spans over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set', () => {
  it('a call through Kafka: its call and stage spans reach the receiver, flushed on SIGTERM', async () => {
    const otlp = await receiver();
    const child = await executor('otel-on', {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: SERVICE_NAME,
      OTEL_BSP_SCHEDULE_DELAY: NEVER_MS,
    });
    const traceId = await oneCall('otel-on');
    expect(otlp.requests).toHaveLength(0); // nothing sent before the stop: the batch delay is an hour
    await stop(child);

    expect(otlp.requests.length).toBeGreaterThan(0);
    for (const r of otlp.requests) expect(r.path).toBe('/v1/traces');
    const spans = otlp.spans().filter((s) => s.traceId === traceId);
    const callSpans = spans.filter((s) => s.name === 'execute_tool ledger_append');
    expect(callSpans).toHaveLength(1);
    expect(callSpans[0]).toMatchObject({ serviceName: SERVICE_NAME, scope: 'toolgate' });
    expect(callSpans[0]!.attributes['toolgate.outcome']).toBe('SUCCESS');
    const stageNames = spans.filter((s) => s.parentSpanId === callSpans[0]!.spanId).map((s) => s.name);
    expect(stageNames).toEqual(
      expect.arrayContaining(['toolgate.stage authorize', 'toolgate.stage execute']),
    );
    for (const span of otlp.spans()) expect(span.serviceName).toBe(SERVICE_NAME);
  });

  it('no OpenTelemetry variable: the same call, and nothing reaches the default collector address', async () => {
    // Were an exporter registered anyway, it would send to the OTLP default, localhost:4318.
    const otlp = await startOtlpReceiver(DEFAULT_OTLP_PORT);
    receivers.push(otlp);
    const child = await executor('otel-unset', {});
    await oneCall('otel-unset');
    await stop(child);
    expect(otlp.requests).toHaveLength(0);
  });

  it('OTEL_TRACES_EXPORTER=none: the same call, and nothing is sent', async () => {
    const otlp = await receiver();
    const child = await executor('otel-off', {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_TRACES_EXPORTER: 'none',
    });
    await oneCall('otel-off');
    await stop(child);
    expect(otlp.requests).toHaveLength(0);
  });

  it('a bad OpenTelemetry variable is a configuration error: exit 1, the variable named', async () => {
    const child = startExecutorProcess('otel-bad', {
      ...stack.serviceEnv('otel-bad'),
      OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318',
    });
    children.push(child);
    child.ready.catch(() => undefined); // it never gets ready: that is the point
    const exit = await child.exited;
    expect(exit.code).toBe(1);
    expect(child.output.join('\n')).toContain('OTEL_EXPORTER_OTLP_ENDPOINT: must be an http or https URL');
  });
});
