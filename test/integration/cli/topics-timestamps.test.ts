import { describe, expect, it } from 'vitest';
import { topicNames } from '../../../libs/events/topics.js';
import { EXIT } from '../../../services/cli/cli-error.js';
import { uniqueName } from '../../helpers/names.js';
import { cli } from '../../unit/cli/capture.js';
import { topicConfig, topicsTestKafka } from './cli-env.js';

/**
 * `topics create` makes the calls topic stamp the broker's append time (message.timestamp.type
 * LogAppendTime), which the executor judges principal assertions against; an existing calls topic
 * that keeps producer timestamps is reported, never changed.
 */
const { kafka, created } = topicsTestKafka('cli-topics-ts');

const timestampTypeOf = (topic: string): Promise<string | undefined> =>
  topicConfig(kafka, topic, 'message.timestamp.type');

describe('topics create and the calls topic timestamps', () => {
  it('creates the calls topic with LogAppendTime and leaves the other topics at the default', async () => {
    const prefix = uniqueName('cli_ts');
    const names = topicNames(prefix);
    created.push(...Object.values(names));
    const brokers = ['--brokers', kafka.brokers.join(',')];
    const r = await cli(['topics', 'create', '--prefix', prefix, '--partitions', '1', ...brokers]);
    expect(r.code).toBe(EXIT.ok);
    expect(await timestampTypeOf(names.calls)).toBe('LogAppendTime');
    expect(await timestampTypeOf(names.results)).toBe('CreateTime');
  });

  it('reports (exit 1) an existing calls topic that keeps producer timestamps, and leaves it', async () => {
    const prefix = uniqueName('cli_ts');
    const names = topicNames(prefix);
    created.push(...Object.values(names));
    const admin = await kafka.admin();
    await admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic: names.calls, numPartitions: 1, replicationFactor: 1 }],
    });
    const brokers = ['--brokers', kafka.brokers.join(',')];
    const r = await cli(['topics', 'create', '--prefix', prefix, '--partitions', '1', ...brokers]);
    expect(r.code).toBe(EXIT.failure);
    expect(r.stdout).toContain(
      `${names.calls} has message.timestamp.type CreateTime, not LogAppendTime; left unchanged.`,
    );
    expect(await timestampTypeOf(names.calls)).toBe('CreateTime');
  });
});
