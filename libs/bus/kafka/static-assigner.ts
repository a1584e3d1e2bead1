import { AssignerProtocol, type Assigner, type PartitionAssigner } from 'kafkajs';

/** The group protocol name every statically assigned member announces. */
export const STATIC_ASSIGNER_NAME = 'ToolgateStaticAssigner';
const VERSION = 0;

/**
 * A kafkajs partition assigner for static assignment (SubscribeOptions.partitions): kafkajs has no
 * `assign()`, so a member that must own fixed partitions joins its group with this protocol instead.
 *
 * Each member announces the partitions it wants in the userData of its join metadata; whichever
 * member the broker picks as leader gives every member exactly what it announced, restricted to
 * partitions that exist. A partition announced by two members goes to the first in member-id order
 * only, so a partition never has two owners inside one group. Partitions nobody announced stay
 * unassigned. The assignment does not depend on which member leads, so a leader change hands out
 * the same partitions again.
 */
export function staticPartitionAssigner(partitions: readonly number[]): PartitionAssigner {
  const wanted = Buffer.from(JSON.stringify([...partitions]));
  return ({ cluster }): Assigner => ({
    name: STATIC_ASSIGNER_NAME,
    version: VERSION,
    protocol({ topics }) {
      return {
        name: STATIC_ASSIGNER_NAME,
        metadata: AssignerProtocol.MemberMetadata.encode({ version: VERSION, topics, userData: wanted }),
      };
    },
    assign({ members, topics }) {
      const taken = new Set<string>();
      const sorted = [...members].sort((a, b) =>
        a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0,
      );
      return Promise.resolve(
        sorted.map(({ memberId, memberMetadata }) => {
          const metadata = AssignerProtocol.MemberMetadata.decode(memberMetadata);
          const asked = announced(metadata?.userData);
          const assignment: Record<string, number[]> = {};
          for (const topic of metadata?.topics ?? topics) {
            const existing = new Set(cluster.findTopicPartitionMetadata(topic).map((p) => p.partitionId));
            const mine = asked.filter((p) => existing.has(p) && !taken.has(`${topic}\u0000${p}`));
            for (const p of mine) taken.add(`${topic}\u0000${p}`);
            if (mine.length > 0) assignment[topic] = mine;
          }
          return {
            memberId,
            memberAssignment: AssignerProtocol.MemberAssignment.encode({
              version: VERSION,
              assignment,
              userData: Buffer.alloc(0),
            }),
          };
        }),
      );
    },
  });
}

/** The partitions a member announced; [] for anything unreadable (that member then gets nothing). */
function announced(userData: Buffer | undefined): number[] {
  if (userData === undefined || userData.length === 0) return [];
  try {
    const parsed: unknown = JSON.parse(userData.toString('utf8'));
    return Array.isArray(parsed) ? parsed.filter((p): p is number => Number.isInteger(p) && p >= 0) : [];
  } catch {
    return [];
  }
}
