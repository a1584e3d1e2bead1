import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkaConsumerLag } from '../../../libs/observability/consumer-lag.js';
import { createToolgateMetrics } from '../../../libs/observability/metrics.js';
import { createTestKafka, type TestKafka } from '../../helpers/kafka.js';
import { parsePromText } from '../../unit/observability/prom-text.js';

let k: TestKafka;
beforeAll(() => {
  k = createTestKafka('tg-obs-lag');
});
afterAll(async () => {
  await k.close();
});

async function produce(topic: string, perPartition: readonly number[]): Promise<void> {
  const producer = k.producer();
  await producer.connect();
  const messages = perPartition.flatMap((count, partition) =>
    Array.from({ length: count }, (_, i) => ({ partition, key: `k${i}`, value: `m${partition}-${i}` })),
  );
  await producer.send({ topic, messages });
}

describe('consumer lag from a real broker', () => {
  it('high watermark minus committed offset per partition; never-committed partitions count all', async () => {
    const topic = await k.uniqueTopic('obs_lag', 3);
    const groupId = k.uniqueGroupId('obs_lag');
    await produce(topic, [10, 7, 4]);
    const admin = await k.admin();
    // The group commits part of what was produced: 6 of 10 on partition 0, all 7 on partition 1,
    // nothing on partition 2.
    await admin.setOffsets({
      groupId,
      topic,
      partitions: [
        { partition: 0, offset: '6' },
        { partition: 1, offset: '7' },
      ],
    });

    const read = kafkaConsumerLag({ admin, groupId, topics: [topic] });
    expect(await read()).toEqual([
      { group: groupId, topic, partition: 0, lag: 4 },
      { group: groupId, topic, partition: 1, lag: 0 },
      { group: groupId, topic, partition: 2, lag: 4 },
    ]);

    // More traffic moves the high watermark, and the lag with it.
    await produce(topic, [0, 5, 0]);
    expect((await read()).map((p) => p.lag)).toEqual([4, 5, 4]);

    // The gauge reads the same numbers at scrape time.
    const registry = new Registry();
    createToolgateMetrics(registry, { isKnownTool: () => false, consumerLag: read });
    const lag = parsePromText(await registry.metrics()).get('toolgate_consumer_lag_messages')?.samples ?? [];
    expect(lag.every((s) => s.labels.group === groupId)).toBe(true);
    expect(lag.map((s) => [s.labels.partition, s.value])).toEqual([
      ['0', 4],
      ['1', 5],
      ['2', 4],
    ]);
    for (const s of lag) expect(s.labels.topic).toBe(topic);
  });

  it('a group that never committed anywhere is behind by everything retained; an empty topic has no lag', async () => {
    const busy = await k.uniqueTopic('obs_lag_busy', 2);
    const empty = await k.uniqueTopic('obs_lag_empty', 1);
    await produce(busy, [3, 2]);
    const read = kafkaConsumerLag({
      admin: await k.admin(),
      groupId: k.uniqueGroupId('obs_fresh'),
      topics: [busy, empty],
    });
    const lags = await read();
    expect(lags).toHaveLength(3);
    expect(lags.find((l) => l.topic === busy && l.partition === 0)?.lag).toBe(3);
    expect(lags.find((l) => l.topic === busy && l.partition === 1)?.lag).toBe(2);
    expect(lags.find((l) => l.topic === empty)?.lag).toBe(0);
  });
});
