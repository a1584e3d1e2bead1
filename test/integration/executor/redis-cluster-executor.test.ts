import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisClusterNodes } from '../../helpers/env.js';
import { createTestRedisCluster, type TestRedisCluster } from '../../helpers/redis.js';
import { createExecutorStack, type ExecutorStack } from './executor-stack.js';
import { startExecutorProcess, type ExecutorProcess } from './executor-process.js';
import { ledgerRows } from './ledger-tools.js';

const KEYS = 12;
const CALLS_PER_KEY = 3;

let stack: ExecutorStack;
let cluster: TestRedisCluster;
let executor: ExecutorProcess | undefined;

beforeAll(async () => {
  stack = await createExecutorStack('exec_cluster');
  cluster = createTestRedisCluster('exec_cluster');
});

afterAll(async () => {
  if (executor !== undefined && executor.child.exitCode === null) {
    executor.child.kill('SIGTERM');
    await executor.exited;
  }
  await cluster.clear();
  await cluster.close();
  await stack.close();
});

describe('an executor process on a Redis Cluster', () => {
  it('runs every call once from REDIS_URL=redis-cluster://…, answers a re-delivery from the record, keys on every master', async () => {
    executor = startExecutorProcess('executor-cluster', {
      ...stack.serviceEnv('executor-cluster'),
      REDIS_URL: `redis-cluster://${redisClusterNodes().join(',')}`,
      REDIS_KEY_PREFIX: cluster.prefix,
      // Every idempotency write waits for the key's replica, as a production cluster would run.
      REDIS_REPLICA_ACKS: '1',
      TOOLGATE_CATALOG_MODULE: fileURLToPath(new URL('./ledger-catalog.ts', import.meta.url)),
      LEDGER_WORK_MS: '1',
    });
    await executor.ready;

    const calls = [];
    for (let k = 0; k < KEYS; k += 1) {
      for (let seq = 1; seq <= CALLS_PER_KEY; seq += 1) {
        calls.push(await stack.request({ key: `K${k}`, seq, ref: `k${k}-${seq}` }));
      }
    }
    await stack.publishCalls(calls);
    // The same calls again, as a redelivery would bring them: answered from the idempotency
    // records on the cluster, nothing run twice.
    await stack.publishCalls(calls.slice(0, KEYS));

    const results = await stack.read('results', calls.length + KEYS, 60_000);
    const outcomes = new Map<string, string[]>();
    for (const r of results)
      outcomes.set(r.event.callId, [...(outcomes.get(r.event.callId) ?? []), r.event.outcome]);
    expect(outcomes.size).toBe(calls.length);
    for (const call of calls) expect(outcomes.get(call.callId)?.[0], call.callId).toBe('SUCCESS');
    const repeated = calls.slice(0, KEYS).map((call) => outcomes.get(call.callId)?.[1]);
    expect(repeated).toEqual(calls.slice(0, KEYS).map(() => 'DUPLICATE'));

    const rows = await ledgerRows(stack.db.pool);
    expect(rows).toHaveLength(calls.length);
    expect(new Set(rows.map((row) => row.callRef)).size).toBe(calls.length);
    for (let k = 0; k < KEYS; k += 1) {
      expect(rows.filter((row) => row.key === `K${k}`).map((row) => row.seq)).toEqual([1, 2, 3]);
    }

    const perMaster = [...(await cluster.keysByMaster()).values()].map((keys) => keys.length);
    expect(perMaster).toHaveLength(3);
    expect(
      perMaster.every((count) => count > 0),
      `keys per master: ${perMaster.join(', ')}`,
    ).toBe(true);
  });
});
