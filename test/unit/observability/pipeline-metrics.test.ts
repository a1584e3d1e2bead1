import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createToolgateMetrics } from '../../../libs/observability/metrics.js';
import {
  knownToolsOf,
  pipelineObserver,
  recordResult,
} from '../../../libs/observability/pipeline-metrics.js';
import { GuardPipeline } from '../../../libs/pipeline/guard-pipeline.js';
import { call, context, countingRefundTool, harness, principal, type Harness } from '../pipeline/fixtures.js';
import { parsePromText } from './prom-text.js';
import { STAGES } from '../../../libs/guards/stages.js';

let h: Harness | undefined;
afterEach(() => {
  h?.close();
  h = undefined;
});

describe('metrics wired into a real guard pipeline', () => {
  it('counts stages and outcomes of real runs; names the model invented stay "unknown"', async () => {
    const refund = countingRefundTool();
    h = harness([refund.tool]);
    const registry = new Registry();
    const metrics = createToolgateMetrics(registry, { isKnownTool: knownToolsOf(h.registry, h.clock) });
    const pipeline = new GuardPipeline({ ...h.deps, observer: pipelineObserver(metrics) }, STAGES);

    const runs = [
      call({ order_id: 'O-1', amount: 5 }),
      call({ order_id: 'O-1', amount: 5 }, { name: 'refund_everything_now' }),
      call({ order_id: 'O-2', amount: 500 }),
    ];
    for (const c of runs) {
      const done = metrics.callStarted();
      const t0 = h.clock.now();
      const { result } = await pipeline.run(c, context());
      recordResult(metrics, result, h.clock.now() - t0, { arguments: c.arguments });
      done();
    }
    // The same call again (same task, step, index, arguments) is a duplicate: replayed, not re-run.
    const again = await pipeline.run(call({ order_id: 'O-1', amount: 5 }), context());
    recordResult(metrics, again.result, 0);
    // No scope: refused at authorization.
    const refused = await pipeline.run(
      call({ order_id: 'O-3', amount: 5 }),
      context({ principal: principal({ scopes: [] }) }),
    );
    recordResult(metrics, refused.result, 0);

    const text = await registry.metrics();
    expect(text).not.toContain('refund_everything_now');
    const families = parsePromText(text);
    const sample = (name: string, labels: Record<string, string>) =>
      [...families.values()]
        .flatMap((f) => f.samples)
        .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
        .reduce((sum, s) => sum + s.value, 0);

    expect(refund.calls()).toBe(1);
    expect(sample('toolgate_tool_calls_total', { tool: 'issue_refund', outcome: 'SUCCESS' })).toBe(1);
    expect(sample('toolgate_tool_calls_total', { tool: 'unknown', outcome: 'UNKNOWN_TOOL' })).toBe(1);
    expect(sample('toolgate_tool_calls_total', { tool: 'issue_refund', outcome: 'POLICY_VIOLATION' })).toBe(
      1,
    );
    expect(sample('toolgate_tool_calls_total', { tool: 'issue_refund', outcome: 'DUPLICATE' })).toBe(1);
    expect(sample('toolgate_tool_calls_total', { tool: 'issue_refund', outcome: 'UNAUTHORIZED' })).toBe(1);
    expect(sample('toolgate_idempotent_replays_total', { tool: 'issue_refund' })).toBe(1);
    expect(sample('toolgate_stage_duration_seconds_count', { stage: 'resolve', decision: 'refuse' })).toBe(1);
    expect(
      sample('toolgate_stage_duration_seconds_count', { stage: 'business-rules', decision: 'refuse' }),
    ).toBe(1);
    expect(sample('toolgate_stage_duration_seconds_count', { stage: 'authorize', decision: 'refuse' })).toBe(
      1,
    );
    expect(sample('toolgate_stage_duration_seconds_count', { stage: 'execute', decision: 'pass' })).toBe(1);
    expect(
      sample('toolgate_stage_duration_seconds_count', { stage: 'idempotency', decision: 'short-circuit' }),
    ).toBe(1);
    expect(sample('toolgate_tool_attempts_total', { tool: 'issue_refund', result: 'ok' })).toBe(1);
    expect(sample('toolgate_calls_in_flight', {})).toBe(0);
  });
});
