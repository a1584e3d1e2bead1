import { generateKeyPairSync } from 'node:crypto';
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

describe('reconciler configuration: automatic redrives', () => {
  const pem = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const files = (path: string): string => {
    if (path === '/keys/reconciler.pem') return pem;
    if (path === '/keys/not-a-key.pem') return 'hello';
    throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
  };

  it('defaults to at most 2 per case, a 30 s grace, and none signed without a key', () => {
    expect(loadReconcilerConfig(BASE)).toMatchObject({
      autoRedriveMax: 2,
      resubmitGraceMs: 30_000,
      resubmissionSigning: undefined,
    });
  });

  it('reads the limit (0 turns them off), the grace and the signing key with its issuer and audience', () => {
    const config = loadReconcilerConfig(
      {
        ...BASE,
        AUTO_REDRIVE_MAX: '0',
        RESUBMIT_GRACE_MS: '5000',
        RECONCILER_SIGNING_KEY_FILE: '/keys/reconciler.pem',
        RECONCILER_SIGNING_KID: 'rc-2025',
        PRINCIPAL_ISSUER: 'agent-backend',
        PRINCIPAL_AUDIENCE: 'executors',
      },
      files,
    );
    expect(config).toMatchObject({
      autoRedriveMax: 0,
      resubmitGraceMs: 5_000,
      resubmissionSigning: { keyPem: pem, kid: 'rc-2025', issuer: 'agent-backend', audience: 'executors' },
    });
    expect(
      loadReconcilerConfig({ ...BASE, RECONCILER_SIGNING_KEY_FILE: '/keys/reconciler.pem' }, files)
        .resubmissionSigning,
    ).toMatchObject({ kid: undefined, issuer: 'toolgate-agent-backend', audience: 'toolgate-executor' });
  });

  it('refuses a bad limit or grace, and a key file that cannot be read or holds no key, by name', () => {
    for (const bad of ['-1', '1.5', 'many', '101']) {
      expect(() => loadReconcilerConfig({ ...BASE, AUTO_REDRIVE_MAX: bad })).toThrow(/AUTO_REDRIVE_MAX/);
    }
    expect(() => loadReconcilerConfig({ ...BASE, RESUBMIT_GRACE_MS: '0' })).toThrow(/RESUBMIT_GRACE_MS/);
    expect(() =>
      loadReconcilerConfig({ ...BASE, RECONCILER_SIGNING_KEY_FILE: '/keys/missing.pem' }, files),
    ).toThrow(/RECONCILER_SIGNING_KEY_FILE: cannot read the file it names/);
    expect(() =>
      loadReconcilerConfig({ ...BASE, RECONCILER_SIGNING_KEY_FILE: '/keys/not-a-key.pem' }, files),
    ).toThrow(/RECONCILER_SIGNING_KEY_FILE: the file holds no PEM private key/);
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
