import type {
  KeyedSubscribeOptions,
  OutgoingMessage,
  SubscribeOptions,
  TopicSpec,
} from '../ports/event-bus.js';

/**
 * Argument checks shared by both adapters, so a caller bug fails the same way on either
 * transport (a TypeError/RangeError naming the bad field) instead of surfacing as a broker error.
 */

const TOPIC_NAME = /^[a-zA-Z0-9._-]{1,249}$/;

/** Kafka's topic-name rule, enforced on both transports. Throws TypeError. */
export function validateTopicName(topic: string): void {
  if (typeof topic !== 'string' || !TOPIC_NAME.test(topic) || topic === '.' || topic === '..') {
    throw new TypeError(`invalid topic name ${JSON.stringify(topic)}: use 1-249 of [a-zA-Z0-9._-]`);
  }
}

/** Names, positive partition and replication counts, no topic listed twice with different counts. */
export function validateTopicSpecs(specs: readonly TopicSpec[]): void {
  if (!isArray(specs)) throw new TypeError('topic specs must be an array');
  const seen = new Map<string, number>();
  for (const spec of specs) {
    validateTopicName(spec.topic);
    if (!Number.isInteger(spec.partitions) || spec.partitions < 1) {
      throw new RangeError(`topic ${spec.topic}: partitions must be a positive integer`);
    }
    if (
      spec.replicationFactor !== undefined &&
      (!Number.isInteger(spec.replicationFactor) || spec.replicationFactor < 1)
    ) {
      throw new RangeError(`topic ${spec.topic}: replicationFactor must be a positive integer`);
    }
    const earlier = seen.get(spec.topic);
    if (earlier !== undefined && earlier !== spec.partitions) {
      throw new RangeError(`topic ${spec.topic} is listed twice with different partition counts`);
    }
    seen.set(spec.topic, spec.partitions);
  }
}

/** String keys, Buffer values, string header values. Throws TypeError/RangeError naming the index. */
export function validateOutgoing(messages: readonly OutgoingMessage[]): void {
  if (!isArray(messages)) throw new TypeError('messages must be an array');
  messages.forEach((message, i) => {
    if (typeof message.key !== 'string') throw new TypeError(`messages[${i}].key must be a string`);
    if (!Buffer.isBuffer(message.value)) throw new TypeError(`messages[${i}].value must be a Buffer`);
    if (message.partition !== undefined && !isPartition(message.partition)) {
      throw new RangeError(`messages[${i}].partition must be a non-negative integer`);
    }
    if (message.headers !== undefined) {
      for (const [name, value] of Object.entries(message.headers)) {
        if (typeof value !== 'string') throw new TypeError(`messages[${i}].headers.${name} must be a string`);
      }
    }
  });
}

/** Group id, topic names, fromBeginning flag and concurrency bound. */
export function validateSubscribeOptions(options: SubscribeOptions): void {
  if (typeof options.groupId !== 'string' || options.groupId.length === 0) {
    throw new TypeError('groupId must be a non-empty string');
  }
  if (!isArray(options.topics) || options.topics.length === 0) {
    throw new TypeError('topics must be a non-empty array');
  }
  options.topics.forEach(validateTopicName);
  if (typeof options.fromBeginning !== 'boolean') throw new TypeError('fromBeginning must be a boolean');
  const concurrency = options.partitionsConcurrently;
  if (concurrency !== undefined && (!Number.isInteger(concurrency) || concurrency < 1)) {
    throw new RangeError('partitionsConcurrently must be a positive integer');
  }
  const partitions = options.partitions;
  if (partitions !== undefined) {
    if (!isArray(partitions) || partitions.length === 0) {
      throw new TypeError('partitions, when given, must be a non-empty array');
    }
    if (!partitions.every(isPartition)) throw new RangeError('partitions must be non-negative integers');
    if (new Set(partitions).size !== partitions.length) throw new RangeError('partitions are listed twice');
  }
}

/** SubscribeOptions' checks, plus positive integer `maxConcurrency` and `maxBuffered`. */
export function validateKeyedSubscribeOptions(options: KeyedSubscribeOptions): void {
  validateSubscribeOptions(options);
  for (const [name, value] of [
    ['maxConcurrency', options.maxConcurrency],
    ['maxBuffered', options.maxBuffered ?? 1],
  ] as const) {
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  }
}

/**
 * Checks that every statically assigned partition exists in every subscribed topic, given each
 * topic's partition count; a member must not wait forever on a partition that cannot exist.
 */
export function validateStaticPartitions(
  partitions: readonly number[] | undefined,
  counts: ReadonlyMap<string, number>,
): void {
  if (partitions === undefined) return;
  for (const [topic, count] of counts) {
    const missing = partitions.filter((p) => p >= count);
    if (missing.length > 0) {
      throw new RangeError(`topic ${topic} has ${count} partitions; no partition ${missing.join(', ')}`);
    }
  }
}

function isPartition(value: unknown): boolean {
  return Number.isInteger(value) && (value as number) >= 0;
}

// Array.isArray narrows a readonly array to any[]; checking an unknown keeps the declared type.
function isArray(value: unknown): boolean {
  return Array.isArray(value);
}
