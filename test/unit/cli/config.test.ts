import { describe, expect, it } from 'vitest';
import { EXIT, UsageError } from '../../../services/cli/cli-error.js';
import { isUnreachable, toCliError } from '../../../services/cli/classify-error.js';
import { CliConfig, redactUrl } from '../../../services/cli/config.js';

describe('CliConfig', () => {
  const config = new CliConfig({
    DATABASE_URL: 'postgres://ops@db:5432/toolgate',
    KAFKA_BROKERS: 'k1:9092, k2:9092,[::1]:9093',
    SCHEMA_REGISTRY_URL: 'http://registry:8081/apis/ccompat/v7/',
    REDIS_URL: 'not-a-url',
    CALLS_PARTITIONS: '24',
  });

  it('parses a variable on use; a flag overrides it and is checked by the same rule', () => {
    expect(config.get('DATABASE_URL', 'c')).toBe('postgres://ops@db:5432/toolgate');
    expect(config.get('DATABASE_URL', 'c', { flag: 'database-url', value: 'postgresql://x/y' })).toBe(
      'postgresql://x/y',
    );
    expect(() => config.get('DATABASE_URL', 'c', { flag: 'database-url', value: 'x' })).toThrow(
      '--database-url: expected postgres://…',
    );
    expect(config.get('KAFKA_BROKERS', 'c')).toEqual(['k1:9092', 'k2:9092', '[::1]:9093']);
    expect(config.get('SCHEMA_REGISTRY_URL', 'c')).toBe('http://registry:8081/apis/ccompat/v7');
    expect(config.get('CALLS_PARTITIONS', 'c')).toBe(24);
    expect(config.get('TOOLGATE_TOPIC_PREFIX', 'c')).toBeUndefined();
  });

  it('a bad variable fails only the command that needs it, as a usage error naming it', () => {
    expect(() => config.get('REDIS_URL', 'dlq resolve')).toThrow(UsageError);
    expect(() => config.get('REDIS_URL', 'dlq resolve')).toThrow('REDIS_URL in the environment is invalid');
    expect(() => config.get('KAFKA_BROKERS', 'c', { flag: 'brokers', value: 'k1' })).toThrow(
      '--brokers: expected host:port[,host:port...]',
    );
    expect(() =>
      new CliConfig({}).require('DATABASE_URL', 'audit who', { flag: 'database-url', value: undefined }),
    ).toThrow("'audit who' needs DATABASE_URL: set it in the environment or pass --database-url.");
  });
});

describe('redactUrl', () => {
  it('hides the password and keeps the rest', () => {
    expect(redactUrl('postgres://ops:s3cret@db:5432/x?sslmode=require')).toBe(
      'postgres://ops:***@db:5432/x?sslmode=require',
    );
    expect(redactUrl('redis://:pw@cache:6379')).toBe('redis://:***@cache:6379');
    expect(redactUrl('postgres://ops@db/x')).toBe('postgres://ops@db/x');
    expect(redactUrl('postgres://db/x')).toBe('postgres://db/x');
  });
});

describe('error classification', () => {
  it('finds a connection failure anywhere in the cause chain', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(isUnreachable(refused)).toBe(true);
    expect(isUnreachable(new AggregateError([refused], ''))).toBe(true);
    expect(isUnreachable(new Error('wrapped', { cause: refused }))).toBe(true);
    const kafka = Object.assign(new Error('retries exceeded'), {
      name: 'KafkaJSNumberOfRetriesExceeded',
      originalError: Object.assign(new Error('Connection error'), { name: 'KafkaJSConnectionError' }),
    });
    expect(isUnreachable(kafka)).toBe(true);
    expect(isUnreachable(Object.assign(new Error('password authentication failed'), { code: '28P01' }))).toBe(
      true,
    );
    expect(isUnreachable(Object.assign(new Error('syntax error'), { code: '42601' }))).toBe(false);
    expect(isUnreachable('ECONNREFUSED')).toBe(false);
  });

  it('maps errors to exit codes: unreachable 3, missing tables 1 with a hint, anything else 1', () => {
    expect(toCliError(Object.assign(new Error('x'), { code: 'ETIMEDOUT' }), 'c').exitCode).toBe(
      EXIT.unreachable,
    );
    const missing = toCliError(
      Object.assign(new Error('relation "audit_records" does not exist'), { code: '42P01' }),
      'c',
    );
    expect(missing.exitCode).toBe(EXIT.failure);
    expect(missing.hint).toContain('run the migrations');
    expect(toCliError(new Error('boom'), 'c').exitCode).toBe(EXIT.failure);
    const usage = new UsageError('bad', 'audit who');
    expect(toCliError(usage, 'c')).toBe(usage);
  });
});
