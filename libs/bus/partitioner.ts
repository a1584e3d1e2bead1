/**
 * Kafka's default partitioner for keyed records: `toPositive(murmur2(utf8(key))) % partitions`,
 * the same function as the Java client and kafkajs' `Partitioners.DefaultPartitioner`. The memory
 * bus uses it, and the Kafka producer is configured with kafkajs' copy, so a key lands on the same
 * partition number whichever transport carries it (a unit test checks the two agree).
 */
export function partitionForKey(key: string, partitions: number): number {
  if (!Number.isInteger(partitions) || partitions < 1) {
    throw new RangeError(`partitions must be a positive integer, got ${partitions}`);
  }
  return (murmur2(Buffer.from(key, 'utf8')) & 0x7fffffff) % partitions;
}

const SEED = 0x9747b28c;
const M = 0x5bd1e995;

/** MurmurHash2 (32-bit) as implemented by org.apache.kafka.common.utils.Utils#murmur2; signed result. */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  let h = SEED ^ length;
  const whole = length - (length % 4);
  for (let i = 0; i < whole; i += 4) {
    let k =
      (data[i]! & 0xff) |
      ((data[i + 1]! & 0xff) << 8) |
      ((data[i + 2]! & 0xff) << 16) |
      ((data[i + 3]! & 0xff) << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M);
    h ^= k;
  }
  // Java's switch falls through from 3 to 1; spelled out here instead of relying on fallthrough.
  const rest = length % 4;
  if (rest >= 3) h ^= (data[whole + 2]! & 0xff) << 16;
  if (rest >= 2) h ^= (data[whole + 1]! & 0xff) << 8;
  if (rest >= 1) {
    h ^= data[whole]! & 0xff;
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}
