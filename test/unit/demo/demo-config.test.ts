import { describe, expect, it } from 'vitest';
import { DemoConfigError, loadDemoConfig } from '../../../services/demo/config.js';
import { checkServers, redactUrl, ServerUnavailableError } from '../../../services/demo/server-checks.js';

describe('demo configuration', () => {
  it('runs embedded by default; --kafka or TOOLGATE_DEMO_MODE=kafka switch to the servers', () => {
    expect(loadDemoConfig([], {}).mode).toBe('embedded');
    expect(loadDemoConfig(['--kafka'], {}).mode).toBe('kafka');
    expect(loadDemoConfig([], { TOOLGATE_DEMO_MODE: 'kafka' }).mode).toBe('kafka');
    expect(loadDemoConfig(['--embedded'], { TOOLGATE_DEMO_MODE: 'kafka' }).mode).toBe('embedded');
    expect(loadDemoConfig([], {}).servers).toEqual({
      kafkaBrokers: ['127.0.0.1:19092'],
      schemaRegistryUrl: 'http://127.0.0.1:18081/apis/ccompat/v7',
      redisUrl: 'redis://127.0.0.1:6379',
      databaseUrl: 'postgres://postgres@127.0.0.1:5432/test',
    });
  });

  it('refuses unknown flags and malformed settings with a message that says which', () => {
    expect(() => loadDemoConfig(['--kafak'], {})).toThrow(DemoConfigError);
    expect(() => loadDemoConfig([], { TOOLGATE_DEMO_MODE: 'cloud' })).toThrow(/TOOLGATE_DEMO_MODE/);
    expect(() => loadDemoConfig([], { REDIS_URL: 'localhost:6379' })).toThrow(/REDIS_URL/);
  });

  it('kafka mode fails fast and clearly when servers are absent, naming each and how to start it', async () => {
    const error = await checkServers({
      kafkaBrokers: ['127.0.0.1:1'],
      schemaRegistryUrl: 'http://127.0.0.1:1/apis/ccompat/v7',
      redisUrl: 'redis://127.0.0.1:1',
      databaseUrl: 'postgres://postgres:secret@127.0.0.1:1/test',
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerUnavailableError);
    const message = (error as Error).message;
    expect(message).toContain('Kafka at 127.0.0.1:1');
    expect(message).toContain('npm run servers:up');
    expect(message).toContain('the schema registry');
    expect(message).toContain('Redis at redis://127.0.0.1:1');
    expect(message).toContain('Postgres at');
    expect(message).not.toContain('secret');
    expect(message).toContain('npm run demo');
    expect(redactUrl('postgres://u:pw@h/db')).toBe('postgres://u:***@h/db');
  }, 20_000);
});
