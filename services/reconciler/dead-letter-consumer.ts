import { processBatchByKey } from '../../libs/bus/keyed-processor.js';
import { ToolgateError } from '../../libs/core/errors.js';
import type {
  BatchControl,
  BatchHandler,
  BusMessage,
  EventSubscriber,
  Subscription,
} from '../../libs/ports/event-bus.js';
import type { EventCodec } from '../../libs/events/event-codec.js';
import { withLogContext } from '../../libs/observability/logger.js';
import { poisonOrigin } from '../../libs/runtime/events.js';
import type { DeadLetterInput, ReconciliationCase } from '../../libs/ports/case-store.js';
import type { CheckerDeps } from './check-case.js';
import { retryUntil } from '../../libs/reconcile/retry.js';
import { triage } from './triage.js';

export interface DeadLetterConsumerDeps extends CheckerDeps {
  readonly subscriber: EventSubscriber;
  readonly codec: EventCodec;
  /** The consumer group every reconciler of a deployment shares on the dead-letter topic. */
  readonly groupId: string;
  readonly partitionsConcurrently?: number;
  /** Dead letters of one batch handled at once (distinct keys only). Default 8. */
  readonly maxConcurrency?: number;
  readonly fromBeginning?: boolean;
}

/** One member of the reconcilers' group on the dead-letter topic. */
export interface DeadLetterConsumer {
  start(): Promise<void>;
  /** Leaves gracefully; a dead letter not yet in a case is delivered again. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Turns dead letters into reconciliation cases (nothing silently dropped).
 * Each message: decode; open its case (`openFromDeadLetter`, idempotent by call id, so a
 * redelivered or repeated dead letter keeps one case); triage it (schedule the first status check,
 * or hand POISON and EXHAUSTED to a person); only then mark it done. A dead letter that cannot be
 * decoded, or that the case model refuses, still opens a POISON case keyed by its position, with its
 * bytes. An unreachable store or schema registry is retried with backoff until it answers or the
 * batch turns stale (then the message is delivered again).
 */
export function createDeadLetterConsumer(deps: DeadLetterConsumerDeps): DeadLetterConsumer {
  let subscription: Subscription | undefined;
  let starting: Promise<void> | undefined;
  let stopping: Promise<void> | undefined;

  const handle = async (message: BusMessage, control: BatchControl): Promise<boolean> => {
    // Every line about this message carries where it is; retries log through the same child.
    const log = withLogContext(deps.logger, {
      topic: message.topic,
      partition: message.partition,
      offset: message.offset,
    });
    const retry = {
      clock: deps.clock,
      backoff: deps.backoff,
      logger: log,
      signal: control.signal,
      onRetry: () => void control.heartbeat(),
    };
    const decoded = await retryUntil(
      'decoding a dead letter',
      async (): Promise<DeadLetterInput> => {
        try {
          return await deps.codec.decode('dlq', message.value);
        } catch (err) {
          if (!isVerdict(err)) throw err;
          return unreadable(message, err.message, deps.reconcilerId, deps.clock.now());
        }
      },
      retry,
    );
    if (decoded === undefined) return false;
    const opened = await retryUntil(
      'opening a case',
      async () => {
        try {
          return await deps.cases.openFromDeadLetter(decoded.value);
        } catch (err) {
          if (!isVerdict(err)) throw err;
          // The case model refuses it (e.g. an UNRESOLVED letter without a call id): keep it as poison.
          return deps.cases.openFromDeadLetter(
            unreadable(message, err.message, deps.reconcilerId, deps.clock.now(), decoded.value),
          );
        }
      },
      retry,
    );
    if (opened === undefined) return false;
    const c: ReconciliationCase = opened.value.case;
    const caseLog = withLogContext(log, {
      ...(c.callId === null ? {} : { callId: c.callId }),
      ...(c.traceId === null ? {} : { traceId: c.traceId }),
    });
    if (opened.value.created) {
      caseLog.info({ caseId: c.caseId, reason: c.reason, deadLetterId: c.deadLetterId }, 'case opened');
    }
    const triaged = await retryUntil(
      'triaging a case',
      () => triage(c, deps),
      { ...retry, logger: caseLog },
      {
        caseId: c.caseId,
      },
    );
    return triaged !== undefined;
  };

  const onBatch: BatchHandler = async (batch, control) => {
    // Only messages whose case is open and triaged are marked; the processor's own marks are dropped.
    const keyedControl: BatchControl = {
      markDone: () => undefined,
      heartbeat: () => control.heartbeat(),
      isStale: () => control.isStale(),
      signal: control.signal,
    };
    await processBatchByKey(
      batch,
      keyedControl,
      async (message) => {
        if (await handle(message, control)) control.markDone(message.offset);
      },
      {
        maxConcurrency: deps.maxConcurrency ?? 8,
        onError: (err, message) =>
          deps.logger.error(
            { err, partition: message.partition, offset: message.offset },
            'dead-letter handler threw',
          ),
      },
    );
  };

  return {
    start() {
      if (starting !== undefined) return Promise.reject(new Error('already started'));
      starting = (async () => {
        subscription = await deps.subscriber.subscribe(
          {
            groupId: deps.groupId,
            topics: [deps.topics.dlq],
            fromBeginning: deps.fromBeginning ?? true,
            partitionsConcurrently: deps.partitionsConcurrently ?? 1,
          },
          onBatch,
        );
      })();
      return starting;
    },
    stop() {
      stopping ??= (async () => {
        await starting?.catch(() => undefined);
        await subscription?.stop();
      })();
      return stopping;
    },
  };
}

/**
 * Bytes of an unusable dead letter its case keeps, for diagnosis. Unlike a call's, a dead letter's
 * bytes carry only the tool's audit allow-listed argument fields, so they may be kept.
 */
const UNUSABLE_LETTER_CAPTURE_BYTES = 64 * 1024;

/** A verdict on the message itself (it will never decode or be accepted), not an outage. */
function isVerdict(err: unknown): err is ToolgateError {
  return err instanceof ToolgateError && (err.code === 'MALFORMED_EVENT' || err.code === 'SCHEMA_INVALID');
}

/**
 * A POISON dead letter standing for a message that is not a usable dead letter, keyed by its
 * position (so a redelivery opens the same case) and keeping its bytes; when it decoded, the fields
 * that identify the call are kept as context, but not its call id (the case model refused it).
 */
function unreadable(
  message: BusMessage,
  why: string,
  producerId: string,
  nowMs: number,
  decoded?: DeadLetterInput,
): DeadLetterInput {
  const raw = message.value.subarray(0, UNUSABLE_LETTER_CAPTURE_BYTES);
  return {
    ...poisonOrigin(message),
    callId: null,
    tenant: decoded?.tenant ?? null,
    tool: decoded?.tool ?? null,
    idempotencyKey: decoded?.idempotencyKey ?? null,
    resourceKey: decoded?.resourceKey ?? null,
    principalId: decoded?.principalId ?? null,
    traceId: decoded?.traceId ?? null,
    requestJson: decoded?.requestJson ?? null,
    errorMessage: `unusable dead letter: ${why}`,
    attemptsJson: decoded?.attemptsJson ?? '[]',
    lastKnownStateJson: JSON.stringify({
      kind: 'dead-letter',
      decoded: decoded !== undefined,
      deadLetterId: decoded?.deadLetterId ?? null,
      callId: decoded?.callId ?? null,
      payloadBytes: message.value.length,
      capturedBytes: raw.length,
    }),
    originalKey: message.key === '' ? null : message.key,
    rawPayloadBase64: raw.toString('base64'),
    producerId,
    createdAtMs: Math.floor(nowMs),
  };
}
