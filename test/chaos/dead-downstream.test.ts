import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { systemClock } from '../../libs/core/system-clock.js';
import { defineTool } from '../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../libs/registry/tool-definition.js';
import { FaultInjector } from '../../services/downstreams/faults.js';
import { createExecutorStack, type ExecutorStack } from '../integration/executor/executor-stack.js';
import { TOOL_SCOPE } from '../integration/executor/ledger-tools.js';
import { chaosPipeline } from './chaos-pipeline.js';
import { collectTopic, type TopicCollector } from './topic-collector.js';

/**
 * Scenario 3, "one dead dependency froze the agent": an order-status agent makes
 * 10 tracking calls per task against a carrier that never answers, 30 s timeout, no breaker →
 * 10 × 30 s = 300 s to give up. Scaled down keeping the ratio: 300 ms timeout (1/100). With a
 * breaker (opens after 5 timeouts: failure threshold 5) the last 5 calls are refused
 * without reaching the carrier. The calls go through the real path (Kafka, executor, pipeline), one
 * after the other as an agent loop makes them.
 *
 * Asserted: how many requests reached the dead carrier (10 without, 5 with the breaker) and what the
 * model is told (server_error / breaker_open, not retryable). Times are printed, not asserted.
 */
const TIMEOUT_MS = 300;
const CALLS_PER_TASK = 10;
/** The timeout of the story this scenario scales down; the printed times are scaled back to it. */
const PRODUCTION_TIMEOUT_MS = 30_000;

function trackingTool(carrier: FaultInjector): ToolDefinition {
  return defineTool({
    name: 'track_shipment',
    version: '1.0.0',
    description: 'Current tracking status of one shipment from the carrier. Not for order details.',
    input: z.object({ trackingId: z.string().min(1) }),
    output: z.object({ status: z.string() }),
    scopes: [TOOL_SCOPE],
    owner: 'orders-team',
    stateChanging: false,
    downstream: 'carrier',
    timeoutMs: TIMEOUT_MS,
    retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
    auditFields: ['trackingId'],
    execute: (args, inv) =>
      carrier.around('track', inv.signal, () => Promise.resolve({ status: 'in transit' })),
  }) as unknown as ToolDefinition;
}

let stack: ExecutorStack;
let results: TopicCollector<'results'>;

beforeAll(async () => {
  stack = await createExecutorStack('chaos_dead');
  results = await collectTopic(stack, 'results');
});

afterAll(async () => {
  await results.stop();
  await stack.close();
});

async function runTask(
  withBreaker: boolean,
): Promise<{ ms: number; reached: number; answers: string[]; perCallMs: number[] }> {
  const carrier = new FaultInjector({ clock: systemClock }).setRates({ hang: 1 });
  const built = chaosPipeline({
    redis: stack.redis.redis,
    keyPrefix: `${stack.redis.prefix}${withBreaker ? 'b' : 'n'}:`,
    tools: [trackingTool(carrier)],
    breaker: withBreaker
      ? { errorPercent: 50, volume: 5, resetMs: 30_000 }
      : { errorPercent: 50, volume: 1_000_000, resetMs: 30_000 },
  });
  const executor = stack.executor(built);
  await executor.start();
  const answers: string[] = [];
  const perCallMs: number[] = [];
  const t0 = performance.now();
  try {
    for (let i = 0; i < CALLS_PER_TASK; i++) {
      const c0 = performance.now();
      const callId = `${stack.prefix}-${withBreaker ? 'b' : 'n'}-${i}`;
      const request = await stack.request(
        { trackingId: `TRK-${i}` },
        { callId, tool: 'track_shipment', resourceKey: `t1:task:${stack.prefix}-${String(withBreaker)}` },
      );
      await stack.publishCalls([request]);
      await results.until(
        () => results.events.some((e) => e.callId === callId),
        10_000,
        () => `the answer to ${callId}`,
      );
      const r = results.events.find((e) => e.callId === callId)!;
      perCallMs.push(Math.round(performance.now() - c0));
      answers.push(`${r.outcome}:${r.error?.code ?? ''}:${String(r.error?.retryable ?? '')}`);
    }
  } finally {
    await executor.stop();
    built.breakers.shutdown();
  }
  return { ms: performance.now() - t0, reached: carrier.received('track'), answers, perCallMs };
}

describe('slow and dead downstreams', () => {
  it('a dead carrier costs every call its timeout without a breaker, and 5 with one', async () => {
    const without = await runTask(false);
    const withB = await runTask(true);
    const scale = PRODUCTION_TIMEOUT_MS / TIMEOUT_MS;
    console.log(
      `[chaos dead-downstream] ${JSON.stringify({
        callsPerTask: CALLS_PER_TASK,
        timeoutMs: TIMEOUT_MS,
        withoutBreaker: {
          giveUpMs: Math.round(without.ms),
          reachedCarrier: without.reached,
          perCallMs: without.perCallMs,
          answers: without.answers,
        },
        withBreaker: {
          giveUpMs: Math.round(withB.ms),
          reachedCarrier: withB.reached,
          perCallMs: withB.perCallMs,
          answers: withB.answers,
        },
        ratio: Number((without.ms / withB.ms).toFixed(2)),
        atProductionTimeoutSec: {
          without: Math.round((without.ms * scale) / 1000),
          with: Math.round((withB.ms * scale) / 1000),
        },
      })}`,
    );
    expect(without.reached).toBe(CALLS_PER_TASK);
    expect(withB.reached).toBe(5);
    expect(without.answers.every((a) => a.startsWith('EXECUTION_ERROR'))).toBe(true);
    expect(withB.answers.every((a) => a.startsWith('EXECUTION_ERROR'))).toBe(true);
    expect(withB.answers.slice(5).every((a) => /BREAKER_OPEN/i.test(a))).toBe(true);
  });
});
