import fc from 'fast-check';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { ERROR_CODES, ToolgateError } from '../../../libs/core/errors.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { OUTCOMES } from '../../../libs/core/outcome.js';
import type { ToolCallResult } from '../../../libs/core/types.js';
import { createCircuitBreakers, type ManagedCircuitBreakers } from '../../../libs/execution/breakers.js';
import { createToolgateMetrics, type ToolgateMetrics } from '../../../libs/observability/metrics.js';
import {
  knownToolsOf,
  pipelineObserver,
  recordResult,
} from '../../../libs/observability/pipeline-metrics.js';
import { ALLOWED_LABELS } from './allowed-labels.js';
import { parsePromText, type Family } from './prom-text.js';

const KNOWN = ['issue_refund', 'get_weather', 'update_inventory'] as const;
const isKnownTool = (name: string) => (KNOWN as readonly string[]).includes(name);
const STAGES = [
  'resolve',
  'validate-input',
  'authorize',
  'rate-limit',
  'business-rules',
  'idempotency',
  'execute',
  'validate-output',
];

const CLOSED: Record<string, ReadonlySet<string>> = {
  tool: new Set([...KNOWN, 'unknown']),
  outcome: new Set([...OUTCOMES, 'unknown']),
  stage: new Set([...STAGES, 'other']),
  decision: new Set(['pass', 'refuse', 'short-circuit', 'unknown']),
  result: new Set(['ok', ...ERROR_CODES, 'unknown']),
  reason: new Set(['UNRESOLVED', 'EXHAUSTED', 'POISON', 'other']),
  status: new Set(['succeeded', 'failed']),
  direction: new Set(['in', 'out']),
};

let breakers: ManagedCircuitBreakers | undefined;
afterEach(() => {
  breakers?.shutdown();
  breakers = undefined;
});

function fresh(options: Partial<Parameters<typeof createToolgateMetrics>[1]> = {}) {
  const registry = new Registry();
  const metrics = createToolgateMetrics(registry, { isKnownTool, ...options });
  return { registry, metrics };
}

async function scrape(registry: Registry): Promise<Map<string, Family>> {
  return parsePromText(await registry.metrics());
}

function value(families: Map<string, Family>, name: string, labels: Record<string, string> = {}) {
  const family = families.get(name.replace(/_(bucket|sum|count)$/, '')) ?? families.get(name);
  const hits = (family?.samples ?? []).filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  return hits.reduce((sum, s) => sum + s.value, 0);
}

function result(
  tool: string,
  outcome: ToolCallResult['outcome'],
  extra: Partial<ToolCallResult> = {},
): ToolCallResult {
  return { callId: 'call_x', tool, outcome, toolInvocations: 1, ...extra };
}

describe('tool and outcome labels stay inside a closed set', () => {
  it('whatever names, outcomes, stages and codes arrive, labels only take known values', async () => {
    const anyString = fc.string({ maxLength: 40 });
    const toolName = fc.oneof(fc.constantFrom(...KNOWN), anyString, fc.constant('__proto__'));
    const event = fc.oneof(
      fc.record({
        kind: fc.constant('call' as const),
        tool: toolName,
        outcome: fc.oneof(fc.constantFrom(...OUTCOMES), anyString),
        ms: fc.double({ noNaN: false }),
      }),
      fc.record({
        kind: fc.constant('stage' as const),
        tool: toolName,
        stage: fc.oneof(fc.constantFrom(...STAGES), anyString),
        decision: fc.oneof(fc.constantFrom('pass', 'refuse', 'short-circuit'), anyString),
        ms: fc.double(),
      }),
      fc.record({
        kind: fc.constant('attempt' as const),
        tool: toolName,
        attempt: fc.integer({ min: -1, max: 6 }),
        result: fc.oneof(fc.constantFrom('ok', ...ERROR_CODES), anyString),
      }),
      fc.record({ kind: fc.constant('dead' as const), reason: anyString }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(event, { maxLength: 40 }), async (events) => {
        const { registry, metrics } = fresh();
        const observer = pipelineObserver(metrics);
        for (const e of events) {
          if (e.kind === 'call') {
            recordResult(metrics, result(e.tool, e.outcome as ToolCallResult['outcome']), e.ms, {
              arguments: { q: e.tool },
            });
          } else if (e.kind === 'stage') {
            observer.onStage?.(e.tool, {
              stage: e.stage as 'resolve',
              decision: e.decision as 'pass',
              durationMs: e.ms,
            });
          } else if (e.kind === 'attempt') {
            observer.onAttempt?.(e.tool, e.attempt, e.result, 3);
          } else {
            metrics.observeDeadLetter(e.reason);
          }
        }
        for (const family of (await scrape(registry)).values()) {
          for (const sample of family.samples) {
            for (const [label, v] of Object.entries(sample.labels)) {
              expect(ALLOWED_LABELS.has(label), `${family.name} label ${label}`).toBe(true);
              const closed = CLOSED[label];
              if (closed !== undefined) expect(closed.has(v), `${family.name}{${label}="${v}"}`).toBe(true);
            }
          }
        }
      }),
      { numRuns: 150 },
    );
  });

  it('a tool name the registry does not have is counted as "unknown", never by name', async () => {
    const { registry, metrics } = fresh();
    recordResult(metrics, result('drop_all_tables', 'UNKNOWN_TOOL'), 2);
    recordResult(metrics, result('issue_refund', 'SUCCESS'), 2);
    const text = await registry.metrics();
    expect(text).not.toContain('drop_all_tables');
    const families = parsePromText(text);
    expect(value(families, 'toolgate_tool_calls_total', { tool: 'unknown', outcome: 'UNKNOWN_TOOL' })).toBe(
      1,
    );
    expect(value(families, 'toolgate_tool_calls_total', { tool: 'issue_refund', outcome: 'SUCCESS' })).toBe(
      1,
    );
  });

  it('call ids, idempotency keys, arguments and error texts never reach /metrics', async () => {
    const { registry, metrics } = fresh();
    recordResult(
      metrics,
      result('issue_refund', 'EXECUTION_ERROR', {
        callId: 'call_8f3e1c',
        idempotencyKey: 'idem_5d2a77',
        error: {
          code: 'SERVER_ERROR',
          message: 'payments said no for user alice@example.com',
          retryable: true,
        },
      }),
      12,
      { arguments: { order_id: 'O-99172', card: '4111111111111111' } },
    );
    const text = await registry.metrics();
    for (const leak of ['call_8f3e1c', 'idem_5d2a77', 'O-99172', '4111', 'alice', 'payments said']) {
      expect(text).not.toContain(leak);
    }
  });

  it('knownToolsOf labels a tool registered after start-up once the refresh interval passed', async () => {
    const clock = new ManualClock(0);
    const names = [{ name: 'issue_refund' }];
    let listed = 0;
    const known = knownToolsOf(
      {
        list: () => {
          listed += 1;
          return names;
        },
      },
      clock,
      1000,
    );
    expect(known('issue_refund')).toBe(true);
    names.push({ name: 'get_weather' });
    expect(known('get_weather')).toBe(false); // within the refresh interval: not re-read
    for (let i = 0; i < 100; i++) known(`invented_${i}`);
    expect(listed).toBe(1);
    await clock.advance(1000);
    expect(known('get_weather')).toBe(true);
    expect(listed).toBe(2);
  });
});

describe('what the metrics count', () => {
  it('calls, latency, replays, rate limits and token equivalents per tool and outcome', async () => {
    const { registry, metrics } = fresh();
    recordResult(metrics, result('issue_refund', 'SUCCESS', { payload: { refund_id: 'R-1' } }), 40, {
      arguments: { order_id: 'O-1', amount: 5 },
    });
    recordResult(metrics, result('issue_refund', 'DUPLICATE', { payload: { refund_id: 'R-1' } }), 3);
    recordResult(metrics, result('get_weather', 'RATE_LIMITED'), 1);
    const f = await scrape(registry);
    expect(value(f, 'toolgate_tool_calls_total', { tool: 'issue_refund' })).toBe(2);
    expect(value(f, 'toolgate_idempotent_replays_total', { tool: 'issue_refund' })).toBe(1);
    expect(value(f, 'toolgate_rate_limited_total', { tool: 'get_weather' })).toBe(1);
    expect(value(f, 'toolgate_rate_limited_total', { tool: 'issue_refund' })).toBe(0);
    const success = { tool: 'issue_refund', outcome: 'SUCCESS' };
    expect(value(f, 'toolgate_tool_call_duration_seconds_count', success)).toBe(1);
    expect(value(f, 'toolgate_tool_call_duration_seconds_sum', success)).toBeCloseTo(0.04);
    expect(value(f, 'toolgate_tool_call_duration_seconds_bucket', { ...success, le: '0.025' })).toBe(0);
    expect(value(f, 'toolgate_tool_call_duration_seconds_bucket', { ...success, le: '0.05' })).toBe(1);
    // {"name":"issue_refund","arguments":{"order_id":"O-1","amount":5}} is 65 characters → 17 token
    // equivalents in (the cost model's chars/4); input is recorded only where arguments were given.
    expect(value(f, 'toolgate_tool_call_tokens_sum', { tool: 'issue_refund', direction: 'in' })).toBe(17);
    expect(value(f, 'toolgate_tool_call_tokens_count', { tool: 'issue_refund', direction: 'in' })).toBe(1);
    expect(value(f, 'toolgate_tool_call_tokens_count', { tool: 'issue_refund', direction: 'out' })).toBe(2);
  });

  it('attempts after the first are retries; stages are timed by stage and decision', async () => {
    const { registry, metrics } = fresh();
    const observer = pipelineObserver(metrics);
    observer.onAttempt?.('issue_refund', 1, 'TIMEOUT', 100);
    observer.onAttempt?.('issue_refund', 2, 'SERVER_ERROR', 100);
    observer.onAttempt?.('issue_refund', 3, 'ok', 100);
    observer.onAttempt?.('get_weather', 1, 'ok', 5);
    observer.onStage?.('issue_refund', {
      stage: 'authorize',
      decision: 'refuse',
      durationMs: 0.3,
      code: 'UNAUTHORIZED',
    });
    const f = await scrape(registry);
    expect(value(f, 'toolgate_tool_retries_total', { tool: 'issue_refund' })).toBe(2);
    expect(value(f, 'toolgate_tool_retries_total', { tool: 'get_weather' })).toBe(0);
    expect(value(f, 'toolgate_tool_attempts_total', { tool: 'issue_refund', result: 'ok' })).toBe(1);
    expect(value(f, 'toolgate_tool_attempts_total', { tool: 'issue_refund', result: 'TIMEOUT' })).toBe(1);
    expect(
      value(f, 'toolgate_stage_duration_seconds_count', { stage: 'authorize', decision: 'refuse' }),
    ).toBe(1);
    expect(value(f, 'toolgate_stage_duration_seconds_bucket', { stage: 'authorize', le: '0.00025' })).toBe(0);
    expect(value(f, 'toolgate_stage_duration_seconds_bucket', { stage: 'authorize', le: '0.0005' })).toBe(1);
  });

  it('in-flight calls go up and down once per call, however often the finish is reported', async () => {
    const { registry, metrics } = fresh();
    const a = metrics.callStarted();
    const b = metrics.callStarted();
    expect(value(await scrape(registry), 'toolgate_calls_in_flight')).toBe(2);
    a();
    a();
    expect(value(await scrape(registry), 'toolgate_calls_in_flight')).toBe(1);
    b();
    expect(value(await scrape(registry), 'toolgate_calls_in_flight')).toBe(0);
  });

  it('tool calls per completed task and dead letters by reason', async () => {
    const { registry, metrics } = fresh();
    metrics.observeTaskCompleted(3, 'succeeded');
    metrics.observeTaskCompleted(8, 'succeeded');
    metrics.observeTaskCompleted(2, 'failed');
    metrics.observeDeadLetter('UNRESOLVED');
    metrics.observeDeadLetter('POISON');
    metrics.observeDeadLetter('something new');
    const f = await scrape(registry);
    expect(value(f, 'toolgate_task_tool_calls_count', { status: 'succeeded' })).toBe(2);
    expect(value(f, 'toolgate_task_tool_calls_sum', { status: 'succeeded' })).toBe(11);
    expect(value(f, 'toolgate_task_tool_calls_bucket', { status: 'succeeded', le: '4' })).toBe(1);
    expect(value(f, 'toolgate_dead_letters_total', { reason: 'UNRESOLVED' })).toBe(1);
    expect(value(f, 'toolgate_dead_letters_total', { reason: 'other' })).toBe(1);
  });

  it('outbound budget waits per downstream, declared downstreams from 0', async () => {
    const { registry, metrics } = fresh({ outboundDownstreams: ['crm', 'mail'] });
    expect(
      value(await scrape(registry), 'toolgate_outbound_wait_seconds_count', { downstream: 'mail' }),
    ).toBe(0);
    metrics.observeOutboundWait('crm', 0);
    metrics.observeOutboundWait('crm', 300);
    metrics.observeOutboundWait('payments', 2_000);
    const f = await scrape(registry);
    expect(value(f, 'toolgate_outbound_wait_seconds_count', { downstream: 'crm' })).toBe(2);
    expect(value(f, 'toolgate_outbound_wait_seconds_sum', { downstream: 'crm' })).toBeCloseTo(0.3);
    expect(value(f, 'toolgate_outbound_wait_seconds_bucket', { downstream: 'crm', le: '0.0005' })).toBe(1);
    expect(value(f, 'toolgate_outbound_wait_seconds_bucket', { downstream: 'payments', le: '1' })).toBe(0);
    expect(value(f, 'toolgate_outbound_wait_seconds_bucket', { downstream: 'payments', le: '2.5' })).toBe(1);
  });
});

describe('gauges read at scrape time', () => {
  it('breaker state per downstream from real breakers: closed 0, open 2', async () => {
    const clock = new ManualClock(0);
    breakers = createCircuitBreakers(
      { errorThresholdPercentage: 50, volumeThreshold: 1, resetTimeoutMs: 60_000, timeoutMs: false },
      clock,
    );
    const b = breakers;
    const { registry } = fresh({ breakerStates: () => b.states() });
    await b.run('weather', () => Promise.resolve('sunny'));
    await expect(
      b.run('payments', () => Promise.reject(new ToolgateError('SERVER_ERROR', 'down'))),
    ).rejects.toThrow();
    const f = await scrape(registry);
    expect(value(f, 'toolgate_circuit_breaker_state', { downstream: 'weather' })).toBe(0);
    expect(value(f, 'toolgate_circuit_breaker_state', { downstream: 'payments' })).toBe(2);
  });

  it('reconciliation cases per reported state and consumer lag per partition', async () => {
    const { registry } = fresh({
      caseCounts: async () => ({ counts: { open: 4, needs_manual: 1, resolved_failed: 0 } }),
      consumerLag: async () => [
        { group: 'toolgate-executors', topic: 'toolgate.calls', partition: 0, lag: 12 },
        { group: 'toolgate-executors', topic: 'toolgate.calls', partition: 1, lag: 0 },
      ],
    });
    const f = await scrape(registry);
    expect(value(f, 'toolgate_reconciliation_cases', { state: 'open' })).toBe(4);
    expect(value(f, 'toolgate_reconciliation_cases', { state: 'needs_manual' })).toBe(1);
    expect(
      f.get('toolgate_reconciliation_cases')?.samples.find((s) => s.labels.state === 'resolved_failed')
        ?.value,
    ).toBe(0);
    expect(f.get('toolgate_reconciliation_cases')?.samples.map((s) => s.labels.state)).toEqual([
      'open',
      'needs_manual',
      'resolved_failed',
    ]);
    expect(
      value(f, 'toolgate_consumer_lag_messages', {
        group: 'toolgate-executors',
        topic: 'toolgate.calls',
        partition: '0',
      }),
    ).toBe(12);
    expect(value(f, 'toolgate_consumer_lag_messages', { topic: 'toolgate.calls', partition: '1' })).toBe(0);
  });

  it('oldest case age per reported state from the same single read; a state with no case has no sample', async () => {
    let reads = 0;
    let ages: Record<string, number> = { open: 1830.25, needs_manual: 40 };
    const { registry } = fresh({
      caseCounts: async () => {
        reads += 1;
        return { counts: { open: 3, needs_manual: 1 }, oldestAgeSeconds: ages };
      },
    });
    let f = await scrape(registry);
    expect(reads).toBe(1);
    const age = (ff: Map<string, Family>) =>
      (ff.get('toolgate_reconciliation_oldest_case_age_seconds')?.samples ?? []).map((s) => [
        s.labels.state,
        s.value,
      ]);
    expect(age(f)).toEqual([
      ['open', 1830.25],
      ['needs_manual', 40],
    ]);
    // The needs_manual case was resolved: its age series goes away rather than reading 0.
    ages = { open: 1890.25, bogus: 5 };
    f = await scrape(registry);
    expect(reads).toBe(2);
    expect(age(f)).toEqual([['open', 1890.25]]);
    expect(value(f, 'toolgate_reconciliation_cases', { state: 'open' })).toBe(3);
  });

  it('a reader that reports no ages leaves the age gauge declared but empty', async () => {
    const { registry } = fresh({ caseCounts: async () => ({ counts: { open: 2 } }) });
    const f = await scrape(registry);
    expect(f.get('toolgate_reconciliation_oldest_case_age_seconds')?.samples).toEqual([]);
    expect(value(f, 'toolgate_reconciliation_cases', { state: 'open' })).toBe(2);
  });

  it('a failing or hanging source empties its gauge and is counted; the scrape still succeeds', async () => {
    let lagCalls = 0;
    const { registry } = fresh({
      sourceTimeoutMs: 50,
      caseCounts: () => Promise.reject(new Error('postgres down')),
      consumerLag: () => {
        lagCalls += 1;
        return lagCalls === 1
          ? Promise.resolve([{ group: 'g', topic: 't', partition: 0, lag: 5 }])
          : new Promise<never>(() => undefined);
      },
    });
    expect(value(await scrape(registry), 'toolgate_consumer_lag_messages', { topic: 't' })).toBe(5);
    const f = await scrape(registry);
    expect(f.get('toolgate_consumer_lag_messages')?.samples).toEqual([]);
    expect(f.get('toolgate_reconciliation_cases')?.samples).toEqual([]);
    expect(f.get('toolgate_reconciliation_oldest_case_age_seconds')?.samples).toEqual([]);
    // One failed read per scrape feeds both case gauges, so one error per scrape.
    expect(value(f, 'toolgate_metrics_source_errors_total', { source: 'cases' })).toBe(2);
    expect(value(f, 'toolgate_metrics_source_errors_total', { source: 'consumer_lag' })).toBe(1);
  });
});

describe('the exposition', () => {
  it('parses as Prometheus text with every family declared once and histograms consistent', async () => {
    const { registry, metrics } = fresh({
      breakerStates: () => new Map([['payments', 'half-open' as const]]),
      caseCounts: async () => ({ counts: { open: 1 }, oldestAgeSeconds: { open: 12.5 } }),
      consumerLag: async () => [
        { group: 'toolgate-executors', topic: 'toolgate.calls', partition: 3, lag: 7 },
      ],
    });
    const observer = pipelineObserver(metrics);
    for (const outcome of OUTCOMES) recordResult(metrics, result('issue_refund', outcome), 17);
    for (const stage of STAGES)
      observer.onStage?.('issue_refund', { stage: stage as 'resolve', decision: 'pass', durationMs: 1 });
    observer.onAttempt?.('issue_refund', 2, 'ok', 9);
    metrics.observeTaskCompleted(4, 'succeeded');
    metrics.observeDeadLetter('EXHAUSTED');
    metrics.observeOutboundWait('payments', 12);
    const families = await scrape(registry);
    expect([...families.keys()].every((n) => n.startsWith('toolgate_'))).toBe(true);
    expect(families.get('toolgate_tool_call_duration_seconds')?.type).toBe('histogram');
    expect(families.get('toolgate_tool_calls_total')?.type).toBe('counter');
    expect(families.get('toolgate_circuit_breaker_state')?.type).toBe('gauge');
    expect(value(families, 'toolgate_circuit_breaker_state', { downstream: 'payments' })).toBe(1);
    expect(value(families, 'toolgate_consumer_lag_messages', { partition: '3' })).toBe(7);
    expect(families.get('toolgate_reconciliation_oldest_case_age_seconds')?.type).toBe('gauge');
    expect(value(families, 'toolgate_reconciliation_oldest_case_age_seconds', { state: 'open' })).toBe(12.5);
    for (const f of families.values()) expect(f.help.length, f.name).toBeGreaterThan(10);
  });

  it('the reader used here rejects malformed text (so passing it means something)', () => {
    expect(() => parsePromText('x_total 1')).toThrow(/newline/);
    expect(() => parsePromText('x_total 1\n')).toThrow(/undeclared/);
    expect(() => parsePromText('# TYPE x counter\nx{a="b} 1\n')).toThrow();
    expect(() => parsePromText('# TYPE x counter\nx{a="b"} one\n')).toThrow(/number/);
    expect(() =>
      parsePromText('# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_count 1\n'),
    ).toThrow(/cumulative/);
  });

  it('registering twice on one registry is refused; two registries are independent', () => {
    const registry = new Registry();
    const first: ToolgateMetrics = createToolgateMetrics(registry, { isKnownTool });
    expect(() => createToolgateMetrics(registry, { isKnownTool })).toThrow();
    const other = fresh();
    first.observeDeadLetter('POISON');
    expect(other.registry.getSingleMetric('toolgate_dead_letters_total')).toBeDefined();
  });
});
