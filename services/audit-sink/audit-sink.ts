import { ToolgateError } from '../../libs/core/errors.js';
import { systemClock } from '../../libs/core/system-clock.js';
import type { AuditRecordEvent, DeadLetterEvent, DeadLetterReason } from '../../libs/events/contracts.js';
import type { TopicNames } from '../../libs/events/topics.js';
import type { AuditEnvelope, AuditStore } from '../../libs/ports/audit-store.js';
import type { Clock } from '../../libs/core/clock.js';
import type {
  BatchControl,
  BatchHandler,
  BusMessage,
  EventPublisher,
  EventSubscriber,
  Subscription,
} from '../../libs/ports/event-bus.js';
import type { EventCodec } from '../../libs/events/event-codec.js';
import { withLogContext } from '../../libs/observability/logger.js';
import { childSpanId, readTraceContext, traceHeaders } from '../../libs/observability/trace-context.js';
import { toAuditEnvelope } from './audit-envelope.js';
import { DEFAULT_BACKOFF, retryWithBackoff, type Backoff } from '../../libs/core/backoff.js';
import type { Logger } from '../../libs/ports/logger.js';
import { auditPoisonLetter } from './poison-letter.js';

/** Everything the audit sink uses; main.ts wires Kafka and Postgres, tests may wire memory adapters. */
export interface AuditSinkDeps {
  readonly subscriber: EventSubscriber;
  /** Publishes dead letters for poison audit events. */
  readonly publisher: EventPublisher;
  readonly codec: EventCodec;
  readonly topics: TopicNames;
  readonly store: AuditStore;
  readonly logger: Logger;
  /** The consumer group every audit-sink instance of a deployment shares. */
  readonly groupId: string;
  /** `producerId` of the dead letters this instance publishes. Default: the group id. */
  readonly producerId?: string;
  /** Paces retries and stamps dead letters. Default: the system clock. */
  readonly clock?: Clock;
  /** Partitions handled at once by this instance. Default 1. */
  readonly partitionsConcurrently?: number;
  /** Where a partition the group never consumed starts: earliest (default true) or the log end. */
  readonly fromBeginning?: boolean;
  /** Retry pacing while the store, the broker or the schema registry is unreachable. */
  readonly backoff?: Backoff;
  /** Cap on the raw bytes of a poison event kept in its dead letter. Default 64 KiB. */
  readonly maxRawPayloadBytes?: number;
  /** Told of every dead letter the broker acknowledged (e.g. `metrics.observeDeadLetter`). Must not throw. */
  readonly deadLettered?: (reason: DeadLetterReason) => void;
}

/** A running audit sink: one member of the sink group on the audit topic. */
export interface AuditSink {
  /** Joins the group; resolves once the member has its first assignment. Rejects if started twice. */
  start(): Promise<void>;
  /**
   * Leaves gracefully: a batch waiting on an unreachable store stops waiting, batches that were
   * stored are committed, everything else is delivered again to the next owner. Idempotent.
   */
  stop(): Promise<void>;
}

type Decoded =
  | { readonly message: BusMessage; readonly envelope: AuditEnvelope }
  | { readonly message: BusMessage; readonly poison: DeadLetterEvent };

/**
 * Builds the audit sink: audit events → the append-only, hash-chained
 * audit store.
 *
 * Per partition batch, in order: decode every message; publish a POISON dead letter for each one
 * that cannot be stored (undecodable, or refused by the envelope checks the store itself applies);
 * append the rest with ONE `store.append` in offset order (so each tenant's chain follows production
 * order); then mark every message done. Nothing is marked before its record is stored or
 * dead-lettered.
 *
 * Every line logged about a batch carries its topic and partition; a dead letter carries a
 * `traceparent` continuing the audit message's trace (a new span), when it had one.
 *
 * Failure handling: an unreachable store, broker or schema registry is retried with backoff (the
 * batch keeps its place; offsets do not move) until it succeeds or the batch turns stale — then the
 * batch is delivered again. Redelivery is harmless: `append` is idempotent by recordId, and a poison
 * message dead-letters again under the same deadLetterId. Poison never stalls a partition.
 */
export function createAuditSink(deps: AuditSinkDeps): AuditSink {
  const clock = deps.clock ?? systemClock;
  const backoff = deps.backoff ?? DEFAULT_BACKOFF;
  const producerId = deps.producerId ?? deps.groupId;
  let subscription: Subscription | undefined;
  let starting: Promise<void> | undefined;
  let stopping: Promise<void> | undefined;

  /** Runs `step` until it resolves (backoff, no jitter); undefined when the batch turned stale first. */
  const untilDone = <T>(
    what: string,
    log: Logger,
    control: BatchControl,
    step: () => Promise<T>,
  ): Promise<{ readonly value: T } | undefined> =>
    retryWithBackoff(step, {
      backoff,
      clock,
      signal: control.signal,
      onRetry: ({ err, retry, delayMs }) => {
        log.warn({ err: errorText(err), retry, delayMs }, `${what} failed; retrying`);
        void control.heartbeat();
      },
    });

  const decodeOne = async (message: BusMessage): Promise<Decoded> => {
    let event: AuditRecordEvent | undefined;
    try {
      event = await deps.codec.decode('audit', message.value);
      return { message, envelope: toAuditEnvelope(event) };
    } catch (err) {
      // Anything but a verdict on the bytes themselves (a registry outage) is retried, not poison.
      if (!isPoison(err)) throw err;
      return {
        message,
        poison: auditPoisonLetter({
          message,
          errorMessage: err.message,
          ...(event === undefined ? {} : { event }),
          producerId,
          nowMs: clock.now(),
          ...(deps.maxRawPayloadBytes === undefined ? {} : { maxRawBytes: deps.maxRawPayloadBytes }),
        }),
      };
    }
  };

  const onBatch: BatchHandler = async (batch, control) => {
    const log = withLogContext(deps.logger, { topic: batch.topic, partition: batch.partition });
    const decoded = await untilDone('decoding audit events', log, control, () =>
      Promise.all(batch.messages.map(decodeOne)),
    );
    if (decoded === undefined) return;
    const poison = decoded.value.flatMap((d) => ('poison' in d ? [d] : []));
    const envelopes = decoded.value.flatMap((d) => ('envelope' in d ? [d.envelope] : []));

    if (poison.length > 0) {
      const sent = await untilDone('publishing dead letters', log, control, async () => {
        const messages = await Promise.all(
          poison.map(async ({ message, poison: letter }) => ({
            key: message.key === '' ? letter.deadLetterId : message.key,
            value: await deps.codec.encode('dlq', letter),
            headers: continuedTrace(message),
          })),
        );
        await deps.publisher.publish(deps.topics.dlq, messages);
      });
      if (sent === undefined) return;
      for (const { message, poison: letter } of poison) {
        deps.deadLettered?.(letter.reason);
        log.warn(
          { offset: message.offset, deadLetterId: letter.deadLetterId, reason: letter.errorMessage },
          'audit event cannot be stored; dead-lettered',
        );
      }
    }

    if (envelopes.length > 0) {
      const stored = await untilDone('appending audit records', log, control, () =>
        deps.store.append(envelopes),
      );
      if (stored === undefined) return;
      log.debug({ ...stored.value }, 'audit records appended');
    }
    for (const message of batch.messages) control.markDone(message.offset);
  };

  return {
    start() {
      if (starting !== undefined) return Promise.reject(new Error('the audit sink was already started'));
      starting = (async () => {
        subscription = await deps.subscriber.subscribe(
          {
            groupId: deps.groupId,
            topics: [deps.topics.audit],
            fromBeginning: deps.fromBeginning ?? true,
            partitionsConcurrently: deps.partitionsConcurrently ?? 1,
          },
          onBatch,
        );
        deps.logger.info(
          { groupId: deps.groupId, topic: deps.topics.audit, assignment: subscription.assignment() },
          'audit sink started',
        );
      })();
      return starting;
    },
    stop() {
      stopping ??= (async () => {
        await starting?.catch(() => undefined);
        await subscription?.stop();
        deps.logger.info({ groupId: deps.groupId }, 'audit sink stopped');
      })();
      return stopping;
    },
  };
}

/** A verdict on the event itself: it will never decode or store, however often it is retried. */
function isPoison(err: unknown): err is ToolgateError {
  return err instanceof ToolgateError && (err.code === 'MALFORMED_EVENT' || err.code === 'SCHEMA_INVALID');
}

/** A new span in the trace of the message a dead letter stands for; none when it carried none. */
function continuedTrace(message: BusMessage): Record<string, string> {
  const parent = readTraceContext(message.headers);
  return parent === null ? {} : traceHeaders(parent.traceId, childSpanId(), parent.flags);
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
