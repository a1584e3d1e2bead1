import type { Admin } from 'kafkajs';
import type { TopicPartition } from '../../ports/event-bus.js';

/** `topic\0partition` → the first offset this generation may deliver on that partition. */
export type StartFloors = ReadonlyMap<string, bigint>;

/** The map key of a topic-partition in {@link StartFloors}. */
export const floorKey = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

/**
 * Fixes the start of every just-assigned partition the group has never committed on, for a
 * `fromBeginning: false` group: the log's current end. kafkajs would otherwise resolve "latest"
 * lazily at its first fetch and never commit it, so a partition moved by a rebalance before any
 * commit would be re-resolved later and skip what arrived in between.
 *
 * The consumer runs with kafkajs' own reset set to earliest; the returned floors make the adapter
 * skip (and mark done) anything below the pinned position, so the result does not depend on
 * whether kafkajs resolved its position before or after `commit` landed.
 */
export async function pinLatestStarts(
  admin: Admin,
  groupId: string,
  assignment: readonly TopicPartition[],
  commit: (offsets: Array<{ topic: string; partition: number; offset: string }>) => Promise<void>,
): Promise<StartFloors> {
  const floors = new Map<string, bigint>();
  if (assignment.length === 0) return floors;
  const topics = [...new Set(assignment.map((tp) => tp.topic))];
  const committed = await admin.fetchOffsets({ groupId, topics });
  const uncommitted = assignment.filter((tp) => {
    const entry = committed
      .find((t) => t.topic === tp.topic)
      ?.partitions.find((p) => p.partition === tp.partition);
    return entry === undefined || BigInt(entry.offset) < 0n;
  });
  if (uncommitted.length === 0) return floors;
  const pins: Array<{ topic: string; partition: number; offset: string }> = [];
  for (const topic of new Set(uncommitted.map((tp) => tp.topic))) {
    const ends = await admin.fetchTopicOffsets(topic);
    for (const tp of uncommitted.filter((u) => u.topic === topic)) {
      const end = ends.find((e) => e.partition === tp.partition);
      if (end === undefined) continue;
      floors.set(floorKey(topic, tp.partition), BigInt(end.high));
      pins.push({ topic, partition: tp.partition, offset: end.high });
    }
  }
  await commit(pins);
  return floors;
}
