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
    expect(() => loadDemoConfig(['--kafak'], {})).toThrow("Run 'npm run demo -- --help'");
    expect(() => loadDemoConfig([], { TOOLGATE_DEMO_MODE: 'cloud' })).toThrow(/TOOLGATE_DEMO_MODE/);
    expect(() => loadDemoConfig([], { REDIS_URL: 'localhost:6379' })).toThrow(/REDIS_URL/);
  });

  it('reads --help and -h next to anything, even a malformed variable', () => {
    expect(loadDemoConfig(['--help'], {}).action).toEqual({ kind: 'help' });
    expect(loadDemoConfig(['--kafka', '-h', '--nonsense'], {}).action).toEqual({ kind: 'help' });
    expect(loadDemoConfig(['--help'], { REDIS_URL: 'localhost:6379' }).action).toEqual({ kind: 'help' });
    expect(loadDemoConfig([], {}).action).toEqual({ kind: 'run' });
  });

  it('reads --clean-up <run-id> (or --clean-up=<run-id>) as a kafka-mode clean-up of that run', () => {
    expect(loadDemoConfig(['--clean-up', 'demo_1a2b3c4d'], {})).toMatchObject({
      action: { kind: 'clean-up', runId: 'demo_1a2b3c4d' },
      mode: 'kafka',
    });
    expect(loadDemoConfig(['--clean-up=demo_it_0a1b'], {}).action).toEqual({
      kind: 'clean-up',
      runId: 'demo_it_0a1b',
    });
  });

  it('refuses a clean-up without a demo run id, so it can never name a schema such as public', () => {
    expect(() => loadDemoConfig(['--clean-up'], {})).toThrow(/needs the run's id/);
    expect(() => loadDemoConfig(['--clean-up', '--kafka'], {})).toThrow(/needs the run's id/);
    for (const id of ['public', 'demo_', 'demo_A1', 'demo_x;drop', 'demo_x.calls', 'other_demo_1']) {
      expect(() => loadDemoConfig(['--clean-up', id], {}), id).toThrow(/not a demo run id/);
    }
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
