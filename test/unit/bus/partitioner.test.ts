import fc from 'fast-check';
import { Partitioners } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { murmur2, partitionForKey } from '../../../libs/bus/partitioner.js';

describe('partitionForKey', () => {
  // kafkajs' DefaultPartitioner is the Java client's murmur2 partitioner; the Kafka adapter uses it,
  // the memory bus uses partitionForKey, so they must agree on every key.
  const kafkajs = Partitioners.DefaultPartitioner();
  const viaKafkajs = (key: string, partitions: number): number =>
    kafkajs({
      topic: 't',
      partitionMetadata: Array.from({ length: partitions }, (_, partitionId) => ({
        partitionId,
        leader: 1,
        partitionErrorCode: 0,
        replicas: [1],
        isr: [1],
      })),
      message: { key, value: null },
    });

  it('agrees with kafkajs DefaultPartitioner on arbitrary keys and partition counts', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 64 }),
        fc.integer({ min: 1, max: 64 }),
        (key, partitions) => {
          expect(partitionForKey(key, partitions)).toBe(viaKafkajs(key, partitions));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('reproduces the Java client murmur2 test vectors (UtilsTest.testMurmur2)', () => {
    const vectors: Array<[string, number]> = [
      ['21', -973932308],
      ['foobar', -790332482],
      ['a-little-bit-long-string', -985981536],
      ['a-little-bit-longer-string', -1486304829],
      ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
      ['abc', 479470107],
    ];
    for (const [key, hash] of vectors) {
      expect(murmur2(Buffer.from(key))).toBe(hash);
      expect(partitionForKey(key, 7)).toBe((hash & 0x7fffffff) % 7);
    }
    expect(new Set(Array.from({ length: 200 }, (_, i) => partitionForKey(`k${i}`, 4)))).toEqual(
      new Set([0, 1, 2, 3]),
    );
  });

  it('rejects a non-positive partition count', () => {
    expect(() => partitionForKey('a', 0)).toThrow(RangeError);
    expect(() => partitionForKey('a', 1.5)).toThrow(RangeError);
  });
});
