import { describe, expect, it } from 'vitest';
import { kafkaBootstrap, loadLocalConfig, registryCcompatUrl } from '../../../deploy/local/config.js';
import { renderServerProperties } from '../../../deploy/local/kafka-files.js';

describe('local launcher config', () => {
  it('defaults to the documented ports and a cache outside the repo', () => {
    const cfg = loadLocalConfig({ HOME: '/home/dev' });
    expect(kafkaBootstrap(cfg.kafka)).toBe('127.0.0.1:19092');
    expect(cfg.kafka.controllerPort).toBe(19093);
    expect(registryCcompatUrl(cfg.registry)).toBe('http://127.0.0.1:18081/apis/ccompat/v7');
    expect(cfg.cacheDir.endsWith('/.cache/toolgate')).toBe(true);
  });

  it('takes ports and the cache from the environment and rejects bad values', () => {
    const cfg = loadLocalConfig({
      KAFKA_PORT: '29092',
      KAFKA_CONTROLLER_PORT: '29093',
      SCHEMA_REGISTRY_PORT: '28081',
      TOOLGATE_CACHE_DIR: '/tmp/c',
    });
    expect(cfg.kafka.port).toBe(29092);
    expect(cfg.registry.port).toBe(28081);
    expect(cfg.cacheDir).toBe('/tmp/c');
    expect(() => loadLocalConfig({ KAFKA_PORT: 'abc' })).toThrow(/KAFKA_PORT/);
    expect(() => loadLocalConfig({ SCHEMA_REGISTRY_PORT: '70000' })).toThrow(/SCHEMA_REGISTRY_PORT/);
    expect(() => loadLocalConfig({ TOOLGATE_KAFKA_HEAP: 'lots' })).toThrow(/TOOLGATE_KAFKA_HEAP/);
  });

  it('renders a single-node KRaft broker bound to the configured ports', () => {
    const cfg = loadLocalConfig({ KAFKA_PORT: '29092', KAFKA_CONTROLLER_PORT: '29093' });
    const props = Object.fromEntries(
      renderServerProperties(cfg.kafka, '/data')
        .trim()
        .split('\n')
        .map((l) => l.split(/=(.*)/s).slice(0, 2)),
    );
    expect(props).toMatchObject({
      'process.roles': 'broker,controller',
      'controller.quorum.voters': '1@127.0.0.1:29093',
      listeners: 'PLAINTEXT://127.0.0.1:29092,CONTROLLER://127.0.0.1:29093',
      'advertised.listeners': 'PLAINTEXT://127.0.0.1:29092',
      'log.dirs': '/data',
      'offsets.topic.replication.factor': '1',
      'transaction.state.log.replication.factor': '1',
      'transaction.state.log.min.isr': '1',
      'group.initial.rebalance.delay.ms': '0',
    });
  });
});
