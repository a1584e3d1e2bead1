import { describe, expect, it } from 'vitest';
import { AuditSinkConfigError, loadAuditSinkConfig } from '../../../services/audit-sink/config.js';
import { loadReconcilerConfig, ReconcilerConfigError } from '../../../services/reconciler/config.js';

const BASE = {
  KAFKA_BROKERS: 'k1:9092, k2:9092',
  SCHEMA_REGISTRY_URL: 'http://registry:8081',
  DATABASE_URL: 'postgres://toolgate:s3cret@db:5432/toolgate',
  REDIS_URL: 'redis://redis:6379',
};

describe('reconciler configuration', () => {
  it('defaults to the executor-compatible names and the 1-2-4-8-16 s schedule', () => {
    const config = loadReconcilerConfig(BASE);
    expect(config).toMatchObject({
      kafkaBrokers: ['k1:9092', 'k2:9092'],
      topicPrefix: 'toolgate',
      groupId: 'toolgate-reconciler',
      partitions: { calls: 12, results: 12, audit: 6, dlq: 3 },
      redisKeyPrefix: 'toolgate:',
      catalogModule: undefined,
      checkScheduleMs: [1_000, 2_000, 4_000, 8_000, 16_000],
      checkTimeoutMs: undefined,
    });
    expect(config.reconcilerId).toMatch(/^reconciler-/);
  });

  it('reads a configured schedule and refuses a bad one, naming the variable but not the values', () => {
    expect(loadReconcilerConfig({ ...BASE, CHECK_SCHEDULE_MS: '500, 1500' }).checkScheduleMs).toEqual([
      500, 1_500,
    ]);
    for (const bad of ['0,100', '1000,-5', 'soon', '1000,,2000']) {
      expect(() => loadReconcilerConfig({ ...BASE, CHECK_SCHEDULE_MS: bad })).toThrow(/CHECK_SCHEDULE_MS/);
    }
    let error: unknown;
    try {
      loadReconcilerConfig({ ...BASE, REDIS_URL: 'http://nope', DATABASE_URL: 'mysql://u:hunter2@db/x' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ReconcilerConfigError);
    const message = (error as Error).message;
    expect(message).toMatch(/REDIS_URL/);
    expect(message).toMatch(/DATABASE_URL/);
    expect(message).not.toContain('hunter2');
  });
});

describe('audit-sink configuration', () => {
  it('defaults to the executor-compatible topic names and partition counts', () => {
    expect(loadAuditSinkConfig(BASE)).toMatchObject({
      topicPrefix: 'toolgate',
      groupId: 'toolgate-audit-sink',
      partitions: { audit: 6, dlq: 3 },
      databasePoolMax: 8,
      chainConcurrency: 4,
    });
  });

  it('lists every missing variable', () => {
    expect(() => loadAuditSinkConfig({})).toThrow(AuditSinkConfigError);
    try {
      loadAuditSinkConfig({});
    } catch (err) {
      expect((err as AuditSinkConfigError).problems.map((p) => p.split(':')[0])).toEqual(
        expect.arrayContaining(['KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL', 'DATABASE_URL']),
      );
    }
  });
});
