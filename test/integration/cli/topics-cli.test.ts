import { describe, expect, it } from 'vitest';
import { topicNames } from '../../../libs/events/topics.js';
import { EXIT } from '../../../services/cli/cli-error.js';
import { uniqueName } from '../../helpers/names.js';
import { cli } from '../../unit/cli/capture.js';
import { topicConfig, topicsTestKafka } from './cli-env.js';

/** `topics create` against the real broker: creates, is idempotent, reports what it will not change. */
const { kafka, created } = topicsTestKafka('cli-topics');

interface TopicsReport {
  ok: boolean;
  topics: {
    topic: string;
    status: string;
    partitions: number;
    replicationFactor: number;
    retentionMs: string | null;
    problems: string[];
  }[];
}

async function partitionsOf(topics: readonly string[]): Promise<Record<string, number>> {
  const { topics: meta } = await (await kafka.admin()).fetchTopicMetadata({ topics: [...topics] });
  return Object.fromEntries(meta.map((t) => [t.name, t.partitions.length]));
}

const retentionOf = (topic: string): Promise<string | undefined> => topicConfig(kafka, topic, 'retention.ms');

describe('topics create', () => {
  it('creates the four topics with the given partitions, replication and retention; a rerun changes nothing', async () => {
    const prefix = uniqueName('cli');
    const names = topicNames(prefix);
    created.push(...Object.values(names));
    const env = { KAFKA_BROKERS: kafka.brokers.join(',') };
    const argv = [
      'topics',
      'create',
      '--prefix',
      prefix,
      '--partitions',
      '3',
      '--dlq-partitions',
      '2',
      '--replication',
      '1',
      '--retention-ms',
      '86400000',
      '--json',
    ];

    const first = await cli(argv, { env });
    expect(first.code).toBe(EXIT.ok);
    const report = first.json<TopicsReport>();
    expect(report.ok).toBe(true);
    expect(
      report.topics.map((t) => [t.topic, t.status, t.partitions, t.replicationFactor, t.retentionMs]),
    ).toEqual([
      [names.calls, 'created', 3, 1, '86400000'],
      [names.results, 'created', 3, 1, '86400000'],
      [names.audit, 'created', 3, 1, '86400000'],
      [names.dlq, 'created', 2, 1, '86400000'],
    ]);
    // What the broker itself says, through a separate admin client.
    expect(await partitionsOf(Object.values(names))).toEqual({
      [names.calls]: 3,
      [names.results]: 3,
      [names.audit]: 3,
      [names.dlq]: 2,
    });
    expect(await retentionOf(names.audit)).toBe('86400000');

    const again = await cli(argv, { env });
    expect(again.code).toBe(EXIT.ok);
    expect(again.json<TopicsReport>().topics.map((t) => t.status)).toEqual([
      'exists',
      'exists',
      'exists',
      'exists',
    ]);
  });

  it('reports (exit 1) but never changes an existing topic with another partition count or retention', async () => {
    const prefix = uniqueName('cli');
    const names = topicNames(prefix);
    created.push(...Object.values(names));
    const brokers = ['--brokers', kafka.brokers.join(',')];
    expect((await cli(['topics', 'create', '--prefix', prefix, '--partitions', '2', ...brokers])).code).toBe(
      EXIT.ok,
    );

    const r = await cli([
      'topics',
      'create',
      '--prefix',
      prefix,
      '--partitions',
      '4',
      '--calls-partitions',
      '2',
      '--retention-ms',
      '-1',
      ...brokers,
    ]);
    expect(r.code).toBe(EXIT.failure);
    expect(r.stdout).toMatch(new RegExp(`${names.calls.replace(/\./g, '\\.')} +2 +1 +\\d+ +mismatch`));
    expect(r.stdout).toContain(`${names.results} has 2 partitions, not 4; left unchanged.`);
    expect(r.stdout).toMatch(/has retention\.ms \d+, not -1; left unchanged\./);
    expect(await partitionsOf(Object.values(names))).toEqual({
      [names.calls]: 2,
      [names.results]: 2,
      [names.audit]: 2,
      [names.dlq]: 2,
    });
  });

  it('without partition flags uses the executor defaults (12, 12, 6, 3), so its start-up check agrees', async () => {
    const prefix = uniqueName('cli');
    const names = topicNames(prefix);
    created.push(...Object.values(names));
    const r = await cli(['topics', 'create', '--json'], {
      env: { KAFKA_BROKERS: kafka.brokers.join(','), TOOLGATE_TOPIC_PREFIX: prefix },
    });
    expect(r.code).toBe(EXIT.ok);
    expect(await partitionsOf(Object.values(names))).toEqual({
      [names.calls]: 12,
      [names.results]: 12,
      [names.audit]: 6,
      [names.dlq]: 3,
    });
  });
});
