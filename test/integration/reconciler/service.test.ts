import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPolicyEngine } from '../../../libs/policy/index.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import { poisonDeadLetter } from '../../../libs/runtime/events.js';
import type { Service } from '../../../libs/runtime/service.js';
import { loadReconcilerConfig } from '../../../services/reconciler/config.js';
import { createReconcilerService } from '../../../services/reconciler/service.js';
import { REDIS_URL } from '../../helpers/env.js';
import { uniqueName } from '../../helpers/names.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';
import { createTestRedis, type TestRedis } from '../../helpers/redis.js';
import { capturedLog, startReady, stopAndExpectGone } from '../../helpers/stack-service.js';
import type { Family } from '../../unit/observability/prom-text.js';
import { createEventStack, eventually, serviceEnvOn, type EventStack } from '../audit-sink/event-stack.js';
import { dropTestRedis } from '../executor/test-parts.js';
import { FILINGS_DDL, filingTool } from './filings.js';

const reconcilerGroup = uniqueName('reconcilers');
let stack: EventStack;
let db: TestSchema;
let redis: TestRedis;
let service: Service | undefined;

beforeAll(async () => {
  stack = await createEventStack('rec_service');
  db = await createTestSchema('rec_service');
  redis = createTestRedis('rec_service');
});

afterAll(async () => {
  await service?.stop();
  await stack.close();
  await dropTestRedis(redis);
  await db.drop();
});

function caseGauge(families: Map<string, Family>): Record<string, number> {
  const samples = families.get('toolgate_reconciliation_cases')?.samples ?? [];
  return Object.fromEntries(samples.map((s) => [s.labels.state!, s.value]));
}

describe('reconciler service', () => {
  it('is ready with Postgres and Redis, and reports unfinished cases and its lag on the dead-letter topic', async () => {
    const log = capturedLog('reconciler');
    const config = loadReconcilerConfig({
      ...serviceEnvOn(stack, db.schema),
      REDIS_URL,
      REDIS_KEY_PREFIX: redis.prefix,
      RECONCILER_GROUP_ID: reconcilerGroup,
      RECONCILER_ID: 'reconciler-it',
      POLL_INTERVAL_MS: '50',
    });
    service = createReconcilerService(config, {
      logger: log.logger,
      catalog: async (env) => {
        const pool = await env.postgres();
        await pool.query(FILINGS_DDL);
        const registry = new ToolRegistry();
        registry.register(filingTool(pool));
        return {
          registry,
          policy: createPolicyEngine({ version: 'reconciler-service-test' }, []),
          downstreamLimits: {},
        };
      },
    });
    const endpoint = await startReady(service, { lifecycle: true, postgres: true, redis: true });
    expect(caseGauge(await endpoint.metrics())).toEqual({ open: 0, needs_manual: 0 });

    // A poison dead letter goes to a person at once: one unfinished case, needs_manual.
    const letter = poisonDeadLetter({
      message: {
        topic: stack.topics.calls,
        partition: 0,
        offset: '41',
        key: 't1:filing:TP-1',
        value: Buffer.from('not a call'),
        headers: {},
        timestampMs: Date.now(),
      },
      errorMessage: 'malformed event: wrong magic byte',
      producerId: 'executor-1',
      nowMs: Date.now(),
    });
    await stack.publish('dlq', [{ key: letter.deadLetterId, event: letter }]);
    const families = await eventually('the case counted', async () => {
      const parsed = await endpoint.metrics();
      return caseGauge(parsed).needs_manual === 1 ? parsed : undefined;
    });
    expect(caseGauge(families)).toEqual({ open: 0, needs_manual: 1 });
    const lag = families.get('toolgate_consumer_lag_messages')!.samples;
    expect(lag.map((s) => s.labels)).toEqual([
      { group: reconcilerGroup, topic: stack.topics.dlq, partition: '0' },
    ]);
    expect(families.get('toolgate_metrics_source_errors_total')?.samples ?? []).toEqual([]);

    expect(log.records().find((r) => r.msg === 'case opened')).toMatchObject({
      name: 'reconciler',
      component: 'reconciler',
      topic: stack.topics.dlq,
      partition: 0,
      offset: expect.any(String),
      reason: 'POISON',
    });

    await stopAndExpectGone(service, endpoint.base);
    service = undefined;
  });
});
