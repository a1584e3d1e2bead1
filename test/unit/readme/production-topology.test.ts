import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { loadLocalConfig } from '../../../deploy/local/config.js';
import { renderServerProperties } from '../../../deploy/local/kafka-files.js';
import { parseRedisClusterUrl, REDIS_CLUSTER_SCHEME } from '../../../libs/adapters/redis/connect.js';
import { topicNames } from '../../../libs/events/topics.js';
import { allTopics } from '../../../libs/runtime/clients.js';
import { idempotencySettings, IDEMPOTENCY_ENV } from '../../../libs/runtime/env.js';
import { z } from 'zod';

/**
 * README.md's "Production topology" states the replication settings, the topic configs toolgate
 * creates and the Redis Cluster settings; deploy/k8s/config.yaml carries the same. Each stated
 * setting is checked here against what the code and the local clusters actually use (the live
 * behaviour — replicated topics, a leader's death, a master's failover — is the chaos and contract
 * suites' part: test/contract/kafka-cluster-topics.test.ts, test/chaos/kafka-failover.test.ts,
 * test/chaos/redis-failover.test.ts).
 */
const read = (path: string): string => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');

function section(text: string, heading: string): string {
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`README.md has no "${heading}" section`);
  const end = text.slice(start + 1).search(/\n#{2,3} /);
  return end < 0 ? text.slice(start) : text.slice(start, start + 1 + end);
}

const topology = section(read('README.md'), '### Production topology');
/** Every `name=value` the section spells out in backticks. */
const stated = new Map(
  [...topology.matchAll(/`([a-zA-Z_.]+)=([^`\s]+)`/g)].map((m) => [m[1]!, m[2]!] as const),
);
const k8s = parseAllDocuments(read('deploy/k8s/config.yaml')).map(
  (d) =>
    d.toJS() as {
      kind: string;
      metadata: { name: string };
      data?: Record<string, string>;
      stringData?: Record<string, string>;
    },
);
const configMap = k8s.find((r) => r.kind === 'ConfigMap' && r.metadata.name === 'toolgate-config')!.data!;
const secret = k8s.find((r) => r.kind === 'Secret' && r.metadata.name === 'toolgate-secrets')!.stringData!;

describe('README: production topology', () => {
  it('states the Kafka replication settings the local cluster runs with', () => {
    expect(stated.get('default.replication.factor')).toBe('3');
    expect(stated.get('min.insync.replicas')).toBe('2');
    const cfg = loadLocalConfig({});
    const properties = renderServerProperties(cfg.kafka, '/data', {
      nodeId: 1,
      voters: '1@127.0.0.1:1',
      replicationFactor: cfg.kafkaCluster.replicationFactor,
      minInsyncReplicas: cfg.kafkaCluster.minInsyncReplicas,
    }).split('\n');
    expect(properties).toContain(`default.replication.factor=${stated.get('default.replication.factor')}`);
    expect(properties).toContain(`min.insync.replicas=${stated.get('min.insync.replicas')}`);
    expect(cfg.kafkaCluster.nodes).toBeGreaterThanOrEqual(3);
  });

  it('names every topic config toolgate creates topics with, and no other', () => {
    const created = allTopics(topicNames('p'), { calls: 1, results: 1, audit: 1, dlq: 1 });
    const configs = created.flatMap((t) =>
      Object.entries(t.configs ?? {}).map(([name, value]) => `${t.topic} ${name}=${value}`),
    );
    expect(configs).toEqual([`p.calls message.timestamp.type=${stated.get('message.timestamp.type')}`]);
    // Topics are created with the broker's default replication factor, which the section sets.
    expect(created.every((t) => t.replicationFactor === undefined)).toBe(true);
  });

  it('gives the Redis Cluster URL form the services parse, and the k8s Secret uses it', () => {
    const form = /`REDIS_URL=([^`]+)`/.exec(topology)?.[1];
    expect(form?.startsWith(`${REDIS_CLUSTER_SCHEME}//`)).toBe(true);
    const target = parseRedisClusterUrl(secret.REDIS_URL!);
    expect(target?.seeds.length).toBeGreaterThanOrEqual(3);
    expect(target?.password).toBeDefined();
  });

  it('sets REDIS_REPLICA_ACKS as stated, in the k8s ConfigMap the executor and reconciler read', () => {
    expect(stated.get('REDIS_REPLICA_ACKS')).toBe('1');
    expect(configMap.REDIS_REPLICA_ACKS).toBe(stated.get('REDIS_REPLICA_ACKS'));
    const settings = idempotencySettings({
      ...z.object(IDEMPOTENCY_ENV).parse(configMap),
      REDIS_URL: secret.REDIS_URL!,
    });
    expect(settings.redisReplicaAcks).toEqual({ replicas: 1, timeoutMs: 500 });
    // The local Redis Cluster gives each master the replica such a write waits for.
    expect(loadLocalConfig({}).redisCluster.replicasPerMaster).toBeGreaterThanOrEqual(1);
  });

  it('lists three brokers or more in the k8s ConfigMap', () => {
    expect(configMap.KAFKA_BROKERS!.split(',').length).toBeGreaterThanOrEqual(3);
  });
});
