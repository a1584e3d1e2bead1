import { describe, expect, it } from 'vitest';
import { ExecutorConfigError, loadExecutorConfig } from '../../../services/executor/config.js';

const JWKS = JSON.stringify({
  keys: [{ kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo', kid: 'k1' }],
});

const base = {
  KAFKA_BROKERS: 'kafka-1:9092, kafka-2:9092',
  SCHEMA_REGISTRY_URL: 'http://registry:8081/apis/ccompat/v7',
  REDIS_URL: 'redis://redis:6379',
  DATABASE_URL: 'postgres://toolgate:secret-password@db:5432/toolgate',
  PRINCIPAL_JWKS: JWKS,
  PRINCIPAL_ISSUER: 'agent-backend',
  PRINCIPAL_AUDIENCE: 'toolgate-executor',
};

describe('loadExecutorConfig', () => {
  it('parses a complete environment with defaults', () => {
    const config = loadExecutorConfig({ ...base, EXECUTOR_ID: 'exec-a', MAX_CONCURRENCY: '32' });
    expect(config.kafkaBrokers).toEqual(['kafka-1:9092', 'kafka-2:9092']);
    expect(config).toMatchObject({
      executorId: 'exec-a',
      maxConcurrency: 32,
      topicPrefix: 'toolgate',
      groupId: 'toolgate-executor',
      catalogModule: undefined,
      partitions: { calls: 12, results: 12 },
    });
    expect(config.principal.jwks.keys[0]).toMatchObject({ kid: 'k1', kty: 'OKP' });
  });

  it('reads the keys from PRINCIPAL_JWKS_FILE', () => {
    const read: string[] = [];
    const { PRINCIPAL_JWKS: _omit, ...rest } = base;
    const config = loadExecutorConfig({ ...rest, PRINCIPAL_JWKS_FILE: '/etc/toolgate/jwks.json' }, (path) => {
      read.push(path);
      return JWKS;
    });
    expect(read).toEqual(['/etc/toolgate/jwks.json']);
    expect(config.principal.jwks.keys).toHaveLength(1);
  });

  it('names every bad variable and never echoes a value', () => {
    let error: unknown;
    try {
      loadExecutorConfig({
        ...base,
        KAFKA_BROKERS: 'not a broker list',
        DATABASE_URL: 'mysql://u:hunter2@x/db',
        MAX_CONCURRENCY: '0',
        PRINCIPAL_ISSUER: ' ',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ExecutorConfigError);
    const message = (error as Error).message;
    for (const name of ['KAFKA_BROKERS', 'DATABASE_URL', 'MAX_CONCURRENCY', 'PRINCIPAL_ISSUER'])
      expect(message).toContain(name);
    expect(message).not.toContain('hunter2');
  });

  it('wants exactly one source of principal keys, holding a JWKS', () => {
    const { PRINCIPAL_JWKS: _omit, ...rest } = base;
    expect(() => loadExecutorConfig(rest)).toThrow(/exactly one/);
    expect(() => loadExecutorConfig({ ...base, PRINCIPAL_JWKS_FILE: '/x' })).toThrow(/exactly one/);
    expect(() => loadExecutorConfig({ ...base, PRINCIPAL_JWKS: '{"keys":[]}' })).toThrow(
      /PRINCIPAL_JWKS: keys/,
    );
    expect(() => loadExecutorConfig({ ...base, PRINCIPAL_JWKS: 'nope' })).toThrow(/not valid JSON/);
    expect(() =>
      loadExecutorConfig({ ...rest, PRINCIPAL_JWKS_FILE: '/missing' }, () => {
        throw Object.assign(new Error('ENOENT: /missing'), { code: 'ENOENT' });
      }),
    ).toThrow(/PRINCIPAL_JWKS_FILE: cannot read the file \(ENOENT\)/);
  });
});
