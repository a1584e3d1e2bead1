import type { Admin, ITopicMetadata } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { KafkaTopicAdmin } from '../../../libs/bus/kafka/kafka-topic-admin.js';

/**
 * How `partitionCount` reads a topic that was created a moment ago on a cluster, where brokers learn
 * of it one after another: one broker may list the topic while the broker asked for its metadata
 * still answers "does not host this topic-partition" (kafkajs' UNKNOWN_TOPIC_OR_PARTITION). A
 * stand-in admin plays those answers in turn; a real cluster's timing is in the bus contract suite.
 */
class StandInAdmin {
  listCalls = 0;
  metadataCalls = 0;
  constructor(
    private readonly lists: ReadonlyArray<readonly string[]>,
    private readonly metadata: ReadonlyArray<ITopicMetadata[] | Error>,
  ) {}

  listTopics(): Promise<string[]> {
    const answer = this.lists[Math.min(this.listCalls, this.lists.length - 1)]!;
    this.listCalls += 1;
    return Promise.resolve([...answer]);
  }

  fetchTopicMetadata(): Promise<{ topics: ITopicMetadata[] }> {
    const answer = this.metadata[Math.min(this.metadataCalls, this.metadata.length - 1)]!;
    this.metadataCalls += 1;
    return answer instanceof Error ? Promise.reject(answer) : Promise.resolve({ topics: answer });
  }
}

const unknownTopic = (): Error =>
  Object.assign(new Error('This server does not host this topic-partition'), {
    type: 'UNKNOWN_TOPIC_OR_PARTITION',
  });
const topicWith = (name: string, partitions: number): ITopicMetadata[] => [
  {
    name,
    partitions: Array.from({ length: partitions }, (_, partitionId) => ({
      partitionErrorCode: 0,
      partitionId,
      leader: 1,
      replicas: [1],
      isr: [1],
    })),
  },
];
const adminOf = (stand: StandInAdmin) => new KafkaTopicAdmin(stand as unknown as Admin);

describe('KafkaTopicAdmin.partitionCount', () => {
  it('asks again while the broker asked for metadata does not host the topic yet', async () => {
    const stand = new StandInAdmin([['t']], [unknownTopic(), unknownTopic(), topicWith('t', 6)]);
    await expect(adminOf(stand).partitionCount('t')).resolves.toBe(6);
    expect(stand.metadataCalls).toBe(3);
  });

  it('asks again while the topic is not listed yet, then reads its partitions', async () => {
    const stand = new StandInAdmin([[], ['other'], ['t']], [topicWith('t', 3)]);
    await expect(adminOf(stand).partitionCount('t')).resolves.toBe(3);
    expect(stand.listCalls).toBe(3);
  });

  it('says undefined for a topic that stays unknown, after its wait', async () => {
    const stand = new StandInAdmin([['t']], [unknownTopic()]);
    await expect(adminOf(stand).partitionCount('t')).resolves.toBeUndefined();
    expect(stand.metadataCalls).toBeGreaterThan(2);
  }, 15_000);

  it('passes on any other metadata error at once', async () => {
    const stand = new StandInAdmin([['t']], [new Error('connection closed')]);
    await expect(adminOf(stand).partitionCount('t')).rejects.toThrow('connection closed');
    expect(stand.metadataCalls).toBe(1);
  });
});
