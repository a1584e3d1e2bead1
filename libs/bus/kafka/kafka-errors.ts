/**
 * Broker answers meaning "your view of the group is out of date": the group is rebalancing, or this
 * member was removed (session expired) or belongs to an old generation. After any of them the
 * member's partitions may already belong to someone else, so running batches must turn stale.
 */
const MEMBERSHIP_ERRORS = new Set([
  'REBALANCE_IN_PROGRESS',
  'ILLEGAL_GENERATION',
  'UNKNOWN_MEMBER_ID',
  'FENCED_INSTANCE_ID',
]);

/** True when `error` is a kafkajs protocol error of one of the membership types above. */
export function isMembershipError(error: unknown): boolean {
  return MEMBERSHIP_ERRORS.has(String(protocolErrorType(error)));
}

/**
 * True when the broker asked does not know the topic or partition (yet): on a cluster, ordinary for
 * a moment after a topic is created, while its metadata reaches every broker.
 */
export function isUnknownTopicError(error: unknown): boolean {
  return protocolErrorType(error) === 'UNKNOWN_TOPIC_OR_PARTITION';
}

/** The `type` of a kafkajs protocol error (its Kafka error name), else undefined. */
function protocolErrorType(error: unknown): unknown {
  return typeof error === 'object' && error !== null ? (error as { type?: unknown }).type : undefined;
}
