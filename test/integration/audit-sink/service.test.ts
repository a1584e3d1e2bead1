import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTraceparent } from '../../../libs/observability/trace-context.js';
import { loadAuditSinkConfig } from '../../../services/audit-sink/config.js';
import { createAuditSinkService } from '../../../services/audit-sink/service.js';
import type { Service } from '../../../libs/runtime/service.js';
import { uniqueName } from '../../helpers/names.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';
import { capturedLog, startReady, stopAndExpectGone } from '../../helpers/stack-service.js';
import { auditEvent } from './audit-events.js';
import { createEventStack, eventually, serviceEnvOn, type EventStack } from './event-stack.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';
const sinkGroup = uniqueName('sinks');

let stack: EventStack;
let db: TestSchema;
let service: Service | undefined;

beforeAll(async () => {
  stack = await createEventStack('sink_service');
  db = await createTestSchema('sink_service');
});

afterAll(async () => {
  await service?.stop();
  await stack.close();
  await db.drop();
});

describe('audit-sink service', () => {
  it('is ready with Postgres, counts the dead letters it publishes, reports its lag, and logs with context', async () => {
    const log = capturedLog('audit-sink');
    const config = loadAuditSinkConfig({
      ...serviceEnvOn(stack, db.schema),
      AUDIT_SINK_GROUP_ID: sinkGroup,
      AUDIT_SINK_ID: 'sink-it',
    });
    service = createAuditSinkService(config, { logger: log.logger });
    const endpoint = await startReady(service, { lifecycle: true, postgres: true });

    await stack.publish('audit', [{ key: 't1', event: auditEvent(uniqueName('rec'), 't1', 2) }]);
    await stack.bus.publish(stack.topics.audit, [
      {
        key: 't1',
        value: Buffer.from('not an audit event'),
        headers: { traceparent: `00-${TRACE}-${SPAN}-01` },
      },
    ]);
    const [letter] = await stack.read('dlq', 1);
    expect(letter!.event.reason).toBe('POISON');
    // The dead letter continues the poison message's trace with a span of its own.
    expect(parseTraceparent(letter!.headers.traceparent)).toMatchObject({ traceId: TRACE });
    expect(parseTraceparent(letter!.headers.traceparent)?.spanId).not.toBe(SPAN);
    await eventually('the stored record', async () => {
      const { rows } = await db.pool.query<{ n: string }>('SELECT count(*)::text AS n FROM audit_records');
      return rows[0]!.n === '1';
    });

    const families = await eventually('the dead letter counted', async () => {
      const parsed = await endpoint.metrics();
      const poison = parsed
        .get('toolgate_dead_letters_total')
        ?.samples.find((s) => s.labels.reason === 'POISON');
      return poison?.value === 1 ? parsed : undefined;
    });
    const lag = families.get('toolgate_consumer_lag_messages')!.samples;
    expect(lag.map((s) => s.labels).sort((a, b) => Number(a.partition) - Number(b.partition))).toEqual([
      { group: sinkGroup, topic: stack.topics.audit, partition: '0' },
      { group: sinkGroup, topic: stack.topics.audit, partition: '1' },
    ]);
    expect(families.get('toolgate_metrics_source_errors_total')?.samples ?? []).toEqual([]);

    expect(log.records().find((r) => r.msg === 'audit event cannot be stored; dead-lettered')).toMatchObject({
      name: 'audit-sink',
      component: 'audit-sink',
      topic: stack.topics.audit,
      partition: expect.any(Number),
      offset: expect.any(String),
    });

    await stopAndExpectGone(service, endpoint.base);
    service = undefined;
  });
});
