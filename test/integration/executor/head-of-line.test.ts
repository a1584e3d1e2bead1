import { fileURLToPath } from 'node:url';
import type { Consumer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partitionForKey } from '../../../libs/bus/partitioner.js';
import type { ToolCallRequestedEvent } from '../../../libs/events/contracts.js';
import { createExecutorStack, PARTITIONS, TENANT, type ExecutorStack } from './executor-stack.js';
import { startExecutorProcess, type ExecutorProcess } from './executor-process.js';
import { ledgerRows } from './ledger-tools.js';
import { decodeEachMessage } from './test-parts.js';

/**
 * One slow call must hold only the later calls of its own resource key. An executor process runs
 * a call that works for 4 s; 300 ms later, calls on other keys — on the slow call's partition and
 * on every other — are published. They must all be answered before the slow call is, while the
 * slow key's next call waits for it, and the group's committed offset on the slow call's partition
 * must not pass it while it runs.
 */
const SLOW_MS = 4_000;
const QUICK_CALLS = 24;

let stack: ExecutorStack;
let child: ExecutorProcess;
let results: Consumer;
const answeredAt = new Map<string, number>();
const outcomes = new Map<string, string>();

beforeAll(async () => {
  stack = await createExecutorStack('head-of-line');
  child = startExecutorProcess('executor-hol', {
    ...stack.serviceEnv('executor-hol'),
    TOOLGATE_CATALOG_MODULE: fileURLToPath(new URL('./timed-catalog.ts', import.meta.url)),
  });
  results = stack.kafka.consumer({ groupId: stack.kafka.uniqueGroupId('hol_results'), maxWaitTimeInMs: 50 });
  const joined = new Promise<void>((resolve) => results.on(results.events.GROUP_JOIN, () => resolve()));
  await results.connect();
  await results.subscribe({ topic: stack.topics.results, fromBeginning: true });
  await results.run({
    eachMessage: async (payload) => {
      const { event } = await decodeEachMessage(stack.codec, 'results', payload);
      if (!answeredAt.has(event.callId)) answeredAt.set(event.callId, Date.now());
      outcomes.set(event.callId, event.outcome);
    },
  });
  await Promise.all([child.ready, joined]);
}, 120_000);

afterAll(async () => {
  await results?.disconnect();
  if (child && child.child.exitCode === null) {
    child.child.kill('SIGTERM');
    await child.exited;
  }
  await stack?.close();
});

/** A ledger key whose calls land on `partition` of the calls topic. */
function keyOn(partition: number, prefix: string): string {
  for (let i = 0; ; i += 1) {
    const key = `${prefix}-${i}`;
    if (partitionForKey(`${TENANT}:ledger:${key}`, PARTITIONS.calls) === partition) return key;
  }
}

async function until(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function call(key: string, seq: number, workMs: number): Promise<ToolCallRequestedEvent> {
  return stack.request({ key, seq, ref: `${key}-${seq}`, workMs }, { tool: 'timed_append' });
}

async function endOffsetOf(partition: number): Promise<bigint> {
  const admin = await stack.kafka.admin();
  const offsets = await admin.fetchTopicOffsets(stack.topics.calls);
  return BigInt(offsets.find((o) => o.partition === partition)!.offset);
}

/** The group's committed offset (the next one it reads) on a partition of the calls topic. */
async function committedOn(partition: number): Promise<bigint> {
  const admin = await stack.kafka.admin();
  const [topic] = await admin.fetchOffsets({
    groupId: `${stack.prefix}-executors`,
    topics: [stack.topics.calls],
  });
  const entry = topic!.partitions.find((p) => p.partition === partition)!;
  return BigInt(entry.offset);
}

describe('a slow call on one key', () => {
  it('holds only its own key: other keys on its partition and on every other are answered first', async () => {
    const slowKey = 'slow';
    const p = partitionForKey(`${TENANT}:ledger:${slowKey}`, PARTITIONS.calls);
    // Quick calls: a quarter on the slow call's partition, the rest spread over the others.
    const quickKeys = Array.from({ length: QUICK_CALLS }, (_, i) =>
      i % 4 === 0
        ? keyOn(p, `same-${i}`)
        : keyOn((p + 1 + (i % (PARTITIONS.calls - 1))) % PARTITIONS.calls, `other-${i}`),
    );

    // Warm up every key's partition, so the measured calls meet a running member.
    const warm = await Promise.all([slowKey, ...quickKeys].map((k) => call(k, 0, 0)));
    await stack.publishCalls(warm);
    await until(() => warm.every((r) => answeredAt.has(r.callId)), 'the warm-up calls');
    // The same quick calls with nothing slow running: the baseline their waits are compared to.
    const baseline = await Promise.all(quickKeys.map((k) => call(k, 1, 0)));
    const baselineAt = await publishTogether(baseline);
    await until(() => baseline.every((r) => answeredAt.has(r.callId)), 'the baseline calls');

    const slow = await call(slowKey, 1, SLOW_MS);
    const slowNext = await call(slowKey, 2, 0);
    const quick = await Promise.all(quickKeys.map((k) => call(k, 2, 0)));
    // Nothing else is published on its partition meanwhile: the slow call takes the end offset.
    const slowOffset = await endOffsetOf(p);
    await stack.publishCalls([slow]);
    await new Promise((r) => setTimeout(r, 300));
    const publishedAt = await publishTogether([slowNext, ...quick]);

    await until(() => quick.every((r) => answeredAt.has(r.callId)), 'the quick calls', 20_000);
    // While the slow call still runs, the group has not committed past it on its partition.
    expect(answeredAt.has(slow.callId)).toBe(false);
    expect(await committedOn(p)).toBeLessThanOrEqual(slowOffset);

    await until(() => answeredAt.has(slowNext.callId), 'the slow key’s next call', 20_000);
    const slowAt = answeredAt.get(slow.callId)!;
    for (const r of quick) expect(answeredAt.get(r.callId)!).toBeLessThan(slowAt);
    expect(answeredAt.get(slowNext.callId)!).toBeGreaterThanOrEqual(slowAt);
    for (const r of [slow, slowNext, ...quick]) expect(outcomes.get(r.callId)).toBe('SUCCESS');

    // Order on the slow key: its ledger rows in seq order, one each.
    const rows = (await ledgerRows(stack.db.pool)).filter((r) => r.key === slowKey);
    expect(rows.map((r) => r.seq)).toEqual([0, 1, 2]);
    const waits = quantiles(quick, publishedAt);
    const base = quantiles(baseline, baselineAt);
    console.log(
      `[head-of-line] ${QUICK_CALLS} quick calls published 300 ms into a ${SLOW_MS} ms call, answered ` +
        `(publish → result) after p50 ${waits.p50} / max ${waits.max} ms; the same calls with nothing ` +
        `slow running: p50 ${base.p50} / max ${base.max} ms; the slow call after ` +
        `${slowAt - publishedAt + 300} ms`,
    );
  });
});

/** Publishes the calls in one produce request; returns when it was sent. */
async function publishTogether(requests: readonly ToolCallRequestedEvent[]): Promise<number> {
  const encoded = await Promise.all(
    requests.map(async (r) => ({ key: r.resourceKey, value: await stack.codec.encode('calls', r) })),
  );
  const at = Date.now();
  await stack.bus.publish(stack.topics.calls, encoded);
  return at;
}

/** Median and largest publish → answer wait of the calls, ms. */
function quantiles(requests: readonly ToolCallRequestedEvent[], publishedAt: number) {
  const waits = requests.map((r) => answeredAt.get(r.callId)! - publishedAt).sort((a, b) => a - b);
  return { p50: waits[Math.floor((waits.length - 1) / 2)]!, max: waits.at(-1)! };
}
