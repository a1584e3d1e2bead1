import type { TopicPartition } from '../../ports/event-bus.js';
import type { MemoryTopic } from './memory-log.js';

/** A partition handed to a member by a rebalance, with where to start reading it. */
export interface AssignedPartition extends TopicPartition {
  /** The group's committed offset for the partition: where the new owner starts reading. */
  readonly startOffset: number;
}

/** What the coordinator needs from a member of a memory consumer group. */
export interface GroupMember {
  readonly memberId: string;
  readonly topics: readonly string[];
  readonly fromBeginning: boolean;
  /** Static assignment (see SubscribeOptions.partitions); undefined for a dynamic member. */
  readonly partitions?: readonly number[] | undefined;
  /**
   * Eager revocation: stop starting batches, mark running ones stale; resolve once they have
   * returned and committed. Never rejects.
   */
  revoke(): Promise<void>;
  /** This member's partitions for `generation` (possibly none). */
  assign(generation: number, partitions: readonly AssignedPartition[]): void;
}

const tpKey = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

/**
 * The group coordinator of the memory bus, mirroring Kafka's classic (eager) protocol: any
 * membership change revokes every member's partitions, waits until all of them have drained their
 * running batches and committed, and only then hands out a new assignment. A partition therefore
 * never has two owners. A member removed without draining (a simulated crash) loses ownership at
 * once, so whatever it still commits is refused, like a Kafka member whose session expired.
 */
export class MemoryGroup {
  private readonly members: GroupMember[] = [];
  private readonly committed = new Map<string, number>();
  private readonly owners = new Map<string, string>();
  /** Bumped by every membership change; only the latest change's rebalance assigns. */
  private epoch = 0;
  private generation = 0;

  constructor(
    readonly groupId: string,
    private readonly topic: (name: string) => MemoryTopic,
  ) {}

  /** Adds a member; it receives its partitions through `assign` once the rebalance completes. */
  join(member: GroupMember): void {
    this.members.push(member);
    this.rebalance();
  }

  /** Removes a member (after it drained, or abruptly) and rebalances the others. */
  remove(memberId: string): void {
    const i = this.members.findIndex((m) => m.memberId === memberId);
    if (i < 0) return;
    this.members.splice(i, 1);
    for (const [key, owner] of this.owners) if (owner === memberId) this.owners.delete(key);
    this.rebalance();
  }

  /** Records `offset` for the partition if `memberId` owns it now; returns whether it did. */
  commit(memberId: string, topic: string, partition: number, offset: number): boolean {
    const key = tpKey(topic, partition);
    if (this.owners.get(key) !== memberId) return false;
    this.committed.set(key, offset);
    return true;
  }

  committedOffset(topic: string, partition: number): number | undefined {
    return this.committed.get(tpKey(topic, partition));
  }

  memberCount(): number {
    return this.members.length;
  }

  /** Whether a member of this kind may join: all members are static or all dynamic. */
  accepts(isStatic: boolean): boolean {
    return this.members.every((m) => (m.partitions !== undefined) === isStatic);
  }

  private rebalance(): void {
    const epoch = ++this.epoch;
    const drains = this.members.map((m) => m.revoke());
    void Promise.all(drains).then(() => {
      if (epoch === this.epoch) this.assign();
    });
  }

  private assign(): void {
    this.generation += 1;
    this.owners.clear();
    const byMember = new Map<string, AssignedPartition[]>(this.members.map((m) => [m.memberId, []]));
    const topics = [...new Set(this.members.flatMap((m) => m.topics))].sort();
    // Round-robin over all topic-partitions, like kafkajs' default assigner, so several
    // one-partition topics do not all land on the first member. Static members instead get the
    // partitions they listed (a partition listed twice goes to the earlier member), like the Kafka
    // adapter's static assigner.
    let turn = 0;
    for (const name of topics) {
      const subscribers = this.members.filter((m) => m.topics.includes(name));
      const topic = this.topic(name);
      for (let partition = 0; partition < topic.partitions.length; partition += 1) {
        const member = subscribers.some((m) => m.partitions !== undefined)
          ? subscribers.find((m) => m.partitions?.includes(partition))
          : subscribers[turn++ % subscribers.length];
        if (member === undefined) continue;
        const key = tpKey(name, partition);
        let start = this.committed.get(key);
        if (start === undefined) {
          // The reset position is committed at once, so a later owner continues from it.
          start = member.fromBeginning ? 0 : topic.partition(partition).end();
          this.committed.set(key, start);
        }
        this.owners.set(key, member.memberId);
        byMember.get(member.memberId)!.push({ topic: name, partition, startOffset: start });
      }
    }
    const generation = this.generation;
    for (const member of this.members) member.assign(generation, byMember.get(member.memberId)!);
  }
}
