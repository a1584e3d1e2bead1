import { randomUUID } from 'node:crypto';
import { DEFAULT_BACKOFF, retryWithBackoff, type Backoff } from '../../libs/core/backoff.js';
import type { Clock } from '../../libs/core/clock.js';
import { systemClock } from '../../libs/core/system-clock.js';
import type { EventCodec } from '../../libs/events/event-codec.js';
import { raceAbort } from '../../libs/execution/attempt-scope.js';
import type { EventPublisher } from '../../libs/ports/event-bus.js';
import { requestAuditEvent, type McpAuditPublisher } from './request-audit.js';

/** How long one gateway record is retried before it is given up, by default. */
export const DEFAULT_AUDIT_RETRY_MS = 30_000;

/** What {@link kafkaAuditPublisher} publishes with. */
export interface KafkaAuditPublisherOptions {
  /** The gateway's bus (the one its SDK client publishes calls with). */
  readonly publisher: EventPublisher;
  readonly codec: EventCodec;
  /** The audit topic. */
  readonly topic: string;
  /** This gateway instance: the records' `producerId`. */
  readonly producerId: string;
  /** How long one record is retried, from its first attempt (default {@link DEFAULT_AUDIT_RETRY_MS}). */
  readonly retryForMs?: number;
  /** Waits between attempts (default 100 ms doubling to 5 s). */
  readonly backoff?: Backoff;
  readonly clock?: Clock;
  /** Record ids (default `crypto.randomUUID`). */
  readonly newId?: () => string;
}

/**
 * The gateway's audit records onto the audit topic, where the audit sink appends them to the
 * tenant's hash chain like every other record. Each record is encoded once as a `source:
 * 'mcp-gateway'` event with a fresh `recordId` — so a retried publish that did land is stored once
 * — keyed by its tenant (one tenant's records stay on one partition, in order, as the executor's),
 * and published with {@link retryWithBackoff} until the broker acknowledges it or `retryForMs`
 * passed; each attempt is cut short at that bound. Resolves once acknowledged; rejects after the
 * bound (or when the record cannot be encoded). Best-effort: a record not yet acknowledged when the
 * gateway process dies is lost, unlike the executor's records, which are published before the call
 * is finished.
 */
export function kafkaAuditPublisher(options: KafkaAuditPublisherOptions): McpAuditPublisher {
  const clock = options.clock ?? systemClock;
  const retryForMs = options.retryForMs ?? DEFAULT_AUDIT_RETRY_MS;
  const newId = options.newId ?? randomUUID;
  return async (record) => {
    const event = requestAuditEvent(record, { recordId: newId(), producerId: options.producerId });
    const message = { key: event.tenant, value: await options.codec.encode('audit', event) };
    const bound = new AbortController();
    const settled = new AbortController();
    clock.sleep(retryForMs, settled.signal).then(
      () => bound.abort(new Error('audit publish cut short at its bound')),
      () => undefined,
    );
    try {
      const published = await retryWithBackoff(
        () => raceAbort(options.publisher.publish(options.topic, [message]), bound.signal),
        { backoff: options.backoff ?? DEFAULT_BACKOFF, clock, signal: bound.signal },
      );
      if (published === undefined) {
        throw new Error(`the audit record was not acknowledged within ${retryForMs} ms`);
      }
    } finally {
      settled.abort();
    }
  };
}
