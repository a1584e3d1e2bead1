import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { tokenEquivalents } from '../../../libs/cost/token-equivalents.js';
import { createLogger } from '../../../libs/observability/logger.js';
import { parseTraceparent } from '../../../libs/observability/trace-context.js';
import { createPolicyEngine } from '../../../libs/policy/index.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import type { CatalogFactory } from '../../../libs/catalog/catalog.js';
import { loadExecutorConfig } from '../../../services/executor/config.js';
import { createExecutorService } from '../../../services/executor/service.js';
import type { Service } from '../../../libs/runtime/service.js';
import { MemoryTracerProvider } from '../../unit/observability/memory-tracer.js';
import { ALLOWED_LABELS } from '../../unit/observability/allowed-labels.js';
import { parsePromText, type Family } from '../../unit/observability/prom-text.js';
import { createExecutorStack, PRINCIPAL, type ExecutorStack } from './executor-stack.js';
import { LEDGER_DDL, ledgerRows, ledgerTools, TOOL_SCOPE } from './ledger-tools.js';

/** A tool that holds its call until the test lets it go: a call in flight while the service stops. */
function heldTool(): { tool: ToolDefinition; entered: Promise<void>; release: () => void } {
  let enter!: () => void;
  let release!: () => void;
  const entered = new Promise<void>((resolve) => (enter = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  const tool = defineTool({
    name: 'held_append',
    version: '1.0.0',
    description: 'Append one entry once the test releases it. Not for reading the ledger.',
    input: z.object({ key: z.string(), seq: z.number().int(), ref: z.string() }),
    output: z.object({ held: z.boolean() }),
    scopes: [TOOL_SCOPE],
    owner: 'ledger-team',
    timeoutMs: 60_000,
    auditFields: ['key'],
    execute: async () => {
      enter();
      await released;
      return { held: true };
    },
  }) as unknown as ToolDefinition;
  return { tool, entered, release };
}

let stack: ExecutorStack;
let service: Service | undefined;

beforeAll(async () => {
  stack = await createExecutorStack('exec_obs');
});

afterAll(async () => {
  await service?.stop('test over');
  await stack.close();
});

describe('executor service observability', () => {
  it('serves low-cardinality metrics, health and readiness, JSON logs with call context, and one trace per call', async () => {
    const held = heldTool();
    const catalog: CatalogFactory = async (env) => {
      const pool = await env.postgres();
      await pool.query(LEDGER_DDL);
      const registry = new ToolRegistry();
      for (const tool of [...ledgerTools(pool), held.tool]) registry.register(tool);
      return { registry, policy: createPolicyEngine({ version: 'obs-test' }, []), downstreamLimits: {} };
    };
    const tracing = new MemoryTracerProvider();
    const lines: string[] = [];
    const logger = createLogger({
      level: 'debug',
      name: 'executor',
      destination: { write: (line: string) => void lines.push(line) },
    });
    service = createExecutorService(loadExecutorConfig(stack.serviceEnv(`${stack.prefix}-executor`)), {
      logger,
      catalog,
      tracer: tracing.getTracer(),
    });
    const { healthPort } = await service.start();
    const base = `http://127.0.0.1:${healthPort}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true, checks: { lifecycle: true, redis: true } });

    const ok = await stack.request({ key: 'A', seq: 1, ref: 'ok' }, { index: 0 });
    // Refused by input validation (seq must be non-negative): inside the pipeline, never run.
    const invalid = await stack.request({ key: 'B', seq: -1, ref: 'invalid' }, { index: 1 });
    // Refused by the executor before the pipeline: no principal assertion at all.
    const unsigned = await stack.request(
      { key: 'C', seq: 1, ref: 'unsigned' },
      { index: 2, principalAssertion: '' },
    );
    // A tool name the model made up.
    const invented = await stack.request(
      { key: 'D', seq: 1, ref: 'invented' },
      { index: 3, tool: 'ledger_apend' },
    );
    const calls = [ok, invalid, unsigned, invented];
    await stack.publishCalls(calls);
    await stack.publishRaw('poison-key', Buffer.from('not an avro event'));

    const results = await stack.read('results', calls.length);
    const audits = await stack.read('audit', calls.length);
    await stack.read('dlq', 1);
    const resultOf = (callId: string) => results.find((r) => r.event.callId === callId)!;
    const auditOf = (callId: string) => audits.find((a) => a.event.callId === callId)!;
    expect(new Map(results.map((r) => [r.event.callId, r.event.outcome]))).toEqual(
      new Map([
        [ok.callId, 'SUCCESS'],
        [invalid.callId, 'SCHEMA_INVALID'],
        [unsigned.callId, 'UNAUTHORIZED'],
        [invented.callId, 'UNKNOWN_TOOL'],
      ]),
    );
    // Refusals never reach the tool: one ledger row, the successful call's.
    expect((await ledgerRows(stack.db.pool)).map((row) => row.callRef)).toEqual(['ok']);

    // Traces: the request's trace id is the audit record's and the outputs' trace id; the outputs
    // of a call that ran are children of its `execute_tool` span, itself a child of the request's.
    for (const call of calls) {
      const requestTrace = call.traceId;
      const result = resultOf(call.callId);
      const audit = auditOf(call.callId);
      expect(audit.event.traceId).toBe(requestTrace);
      expect(result.event.traceId).toBe(requestTrace);
      expect(parseTraceparent(result.headers.traceparent)?.traceId).toBe(requestTrace);
      expect(parseTraceparent(audit.headers.traceparent)?.traceId).toBe(requestTrace);
      expect(parseTraceparent(result.headers.traceparent)?.spanId).not.toBe('00f067aa0ba902b7');
    }
    const callSpan = tracing.spans.find(
      (s) => s.name === 'execute_tool ledger_append' && s.attributes['gen_ai.tool.call.id'] === ok.callId,
    )!;
    expect(callSpan).toMatchObject({
      traceId: ok.traceId,
      parentSpanId: '00f067aa0ba902b7',
      parentIsRemote: true,
    });
    expect(parseTraceparent(resultOf(ok.callId).headers.traceparent)?.spanId).toBe(callSpan.spanId);
    expect(parseTraceparent(auditOf(ok.callId).headers.traceparent)?.spanId).toBe(callSpan.spanId);
    const stageSpans = tracing.spans.filter(
      (s) => s.name.startsWith('toolgate.stage ') && s.traceId === ok.traceId,
    );
    expect(stageSpans.length).toBeGreaterThan(0);
    expect(stageSpans.every((s) => s.parentSpanId === callSpan.spanId)).toBe(true);
    // A refused principal is a pipeline run too: its span ends at the verify-principal stage.
    const refusedSpan = tracing.spans.find((s) => s.attributes['gen_ai.tool.call.id'] === unsigned.callId)!;
    expect(refusedSpan.attributes).toMatchObject({
      'toolgate.outcome': 'UNAUTHORIZED',
      'toolgate.principal.id': 'unverified',
    });
    expect(
      tracing.spans
        .filter((s) => s.name.startsWith('toolgate.stage ') && s.parentSpanId === refusedSpan.spanId)
        .map((s) => s.name),
    ).toEqual(['toolgate.stage verify-principal']);

    // Token equivalents: the cost model's figures (name + arguments in, payload or error out).
    for (const call of calls) {
      const { event } = resultOf(call.callId);
      const request = { name: call.tool, arguments: JSON.parse(call.argumentsJson) as unknown };
      expect(event.tokensIn).toBe(tokenEquivalents({}, request).tokensIn);
      expect(event.tokensOut).toBeGreaterThan(0);
    }
    const okEvent = resultOf(ok.callId).event;
    expect(okEvent.tokensOut).toBe(tokenEquivalents({ payload: JSON.parse(okEvent.payloadJson!) }).tokensOut);

    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    const families = parsePromText(await metrics.text());
    const value = (name: string, labels: Record<string, string>) => sampleOf(families, name, labels)?.value;

    expect(value('toolgate_tool_calls_total', { tool: 'ledger_append', outcome: 'SUCCESS' })).toBe(1);
    expect(value('toolgate_tool_calls_total', { tool: 'ledger_append', outcome: 'SCHEMA_INVALID' })).toBe(1);
    expect(value('toolgate_tool_calls_total', { tool: 'ledger_append', outcome: 'UNAUTHORIZED' })).toBe(1);
    expect(value('toolgate_tool_calls_total', { tool: 'unknown', outcome: 'UNKNOWN_TOOL' })).toBe(1);
    expect(
      value('toolgate_tool_call_duration_seconds_count', { tool: 'unknown', outcome: 'UNKNOWN_TOOL' }),
    ).toBe(1);
    expect(value('toolgate_stage_duration_seconds_count', { stage: 'execute', decision: 'pass' })).toBe(1);
    expect(
      value('toolgate_stage_duration_seconds_count', { stage: 'validate-input', decision: 'refuse' }),
    ).toBe(1);
    expect(value('toolgate_stage_duration_seconds_count', { stage: 'resolve', decision: 'refuse' })).toBe(1);
    // The refused principal is a decision of the first ingress stage, measured like every stage.
    expect(
      value('toolgate_stage_duration_seconds_count', { stage: 'verify-principal', decision: 'refuse' }),
    ).toBe(1);
    expect(value('toolgate_tool_attempts_total', { tool: 'ledger_append', result: 'ok' })).toBe(1);
    expect(value('toolgate_dead_letters_total', { reason: 'POISON' })).toBe(1);
    expect(value('toolgate_calls_in_flight', {})).toBe(0);
    expect(value('toolgate_circuit_breaker_state', { downstream: 'ledger-db' })).toBe(0);
    for (let partition = 0; partition < 6; partition++) {
      const lag = value('toolgate_consumer_lag_messages', {
        group: `${stack.prefix}-executors`,
        topic: stack.topics.calls,
        partition: String(partition),
      });
      expect(lag).toBeGreaterThanOrEqual(0);
    }
    expect(families.get('toolgate_metrics_source_errors_total')?.samples ?? []).toEqual([]);
    expect(families.has('process_cpu_user_seconds_total')).toBe(true);
    // Token sums per tool label and direction equal what the result events carry.
    for (const [tool, direction, field] of [
      ['ledger_append', 'in', 'tokensIn'],
      ['ledger_append', 'out', 'tokensOut'],
      ['unknown', 'in', 'tokensIn'],
    ] as const) {
      const expected = results
        .filter((r) => (r.event.tool === 'ledger_append' ? 'ledger_append' : 'unknown') === tool)
        .reduce((sum, r) => sum + r.event[field], 0);
      expect(value('toolgate_tool_call_tokens_sum', { tool, direction })).toBe(expected);
    }

    // Cardinality: only allowed label names, and no call, task, trace or principal id, and not the
    // invented tool name, in any label value.
    const forbidden = [
      ...calls.flatMap((c) => [c.callId, c.taskId, c.traceId, c.idempotencyKey, c.providerCallId]),
      PRINCIPAL.id,
      'ledger_apend',
    ];
    for (const family of families.values()) {
      if (!family.name.startsWith('toolgate_')) continue;
      for (const sample of family.samples) {
        for (const [label, labelValue] of Object.entries(sample.labels)) {
          expect(ALLOWED_LABELS, `${family.name} label ${label}`).toContain(label);
          for (const id of forbidden) expect(labelValue, `${family.name}{${label}}`).not.toContain(id);
        }
      }
    }

    // Logs: JSON lines; the call's lines carry its context; no principal assertion anywhere.
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const handled = records.find((r) => r.msg === 'call handled' && r.callId === ok.callId)!;
    expect(handled).toMatchObject({
      name: 'executor',
      component: 'executor',
      callId: ok.callId,
      taskId: ok.taskId,
      traceId: ok.traceId,
      topic: stack.topics.calls,
      outcome: 'SUCCESS',
    });
    expect(typeof handled.partition).toBe('number');
    expect(typeof handled.offset).toBe('string');
    for (const call of calls) {
      if (call.principalAssertion !== '') expect(lines.join('\n')).not.toContain(call.principalAssertion);
    }

    // Readiness turns 503 as soon as the stop begins, while a call is still finishing.
    const holding = await stack.request({ key: 'E', seq: 1, ref: 'held' }, { index: 4, tool: 'held_append' });
    await stack.publishCalls([holding]);
    await held.entered;
    const stopped = service.stop('test');
    const during = await fetch(`${base}/readyz`);
    expect(during.status).toBe(503);
    expect(await during.json()).toMatchObject({ ready: false, failed: { lifecycle: 'stopping' } });
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    held.release();
    await stopped;
    service = undefined;
    const afterStop = await stack.read('results', calls.length + 1);
    expect(afterStop.find((r) => r.event.callId === holding.callId)?.event.outcome).toBe('SUCCESS');
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  });
});

function sampleOf(families: Map<string, Family>, name: string, labels: Record<string, string>) {
  for (const family of families.values()) {
    for (const sample of family.samples) {
      if (sample.name !== name) continue;
      const keys = Object.keys(sample.labels);
      if (keys.length !== Object.keys(labels).length) continue;
      if (keys.every((k) => sample.labels[k] === labels[k])) return sample;
    }
  }
  return undefined;
}
