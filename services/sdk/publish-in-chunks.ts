import type { EventPublisher, OutgoingMessage } from '../../libs/ports/event-bus.js';

/** Key + value bytes of one message: what a record batch is mostly made of. */
export function messageBytes(message: OutgoingMessage): number {
  return message.value.length + Buffer.byteLength(message.key);
}

/**
 * `messages` in order, cut into consecutive chunks of at most `maxBytes` key + value bytes each; a
 * message larger than `maxBytes` forms a chunk of its own. Concatenating the chunks gives back
 * `messages`. Pure.
 */
export function chunkByBytes(messages: readonly OutgoingMessage[], maxBytes: number): OutgoingMessage[][] {
  const chunks: OutgoingMessage[][] = [];
  let current: OutgoingMessage[] = [];
  let bytes = 0;
  for (const message of messages) {
    const size = messageBytes(message);
    if (current.length > 0 && bytes + size > maxBytes) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(message);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/** What {@link publishInChunks} could not publish because the broker refused it as too large. */
export interface ChunkedPublish {
  readonly tooLarge: readonly OutgoingMessage[];
}

/**
 * Publishes `messages` to `topic` as consecutive publishes of at most `maxBytes` each (see
 * {@link chunkByBytes}), each started once the previous one is acknowledged, so the messages of one
 * key keep their order and no record batch grows beyond what the broker accepts.
 *
 * A publish the broker refuses as too large (its `message.max.bytes` is below `maxBytes`) is split
 * in halves and retried, down to single messages; a single message refused so is returned in
 * `tooLarge` instead of failing the rest (a message of a refused multi-partition publish may then
 * be written twice: the executor answers a repeat from its idempotency store, the SDK dedupes by
 * call id). Resolves when everything else is acknowledged; rejects with the first other failure
 * (the chunks before it are written, the ones after it are not sent, the failed one may be partly
 * written).
 */
export async function publishInChunks(
  publisher: EventPublisher,
  topic: string,
  messages: readonly OutgoingMessage[],
  maxBytes: number,
): Promise<ChunkedPublish> {
  const tooLarge: OutgoingMessage[] = [];
  const send = async (chunk: readonly OutgoingMessage[]): Promise<void> => {
    try {
      await publisher.publish(topic, chunk);
    } catch (err) {
      if (!isRefusedAsTooLarge(err)) throw err;
      if (chunk.length === 1) {
        tooLarge.push(chunk[0]!);
        return;
      }
      const half = Math.ceil(chunk.length / 2);
      await send(chunk.slice(0, half));
      await send(chunk.slice(half));
    }
  };
  for (const chunk of chunkByBytes(messages, maxBytes)) await send(chunk);
  return { tooLarge };
}

/** Kafka's error types for a record batch above the broker's or the topic's size limit. */
const TOO_LARGE_TYPES: ReadonlySet<unknown> = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE']);

/** Whether `err` (or an error it wraps) is the broker refusing a publish for its size. */
export function isRefusedAsTooLarge(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e !== null && typeof e === 'object' && depth < 5; depth++) {
    if (TOO_LARGE_TYPES.has((e as { type?: unknown }).type)) return true;
    e =
      (e as { cause?: unknown; originalError?: unknown }).cause ??
      (e as { originalError?: unknown }).originalError;
  }
  return false;
}
