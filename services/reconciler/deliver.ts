import type { AuditRecordEvent, ToolCallResultEvent } from '../../libs/events/contracts.js';
import type { TopicNames } from '../../libs/events/topics.js';
import type { CaseRequest } from '../../libs/reconcile/case-request.js';
import { settledRecord, type Resolution } from '../../libs/reconcile/resolution.js';
import type { Clock } from '../../libs/ports/clock.js';
import type { EventPublisher } from '../../libs/ports/event-bus.js';
import type { EventCodec } from '../../libs/ports/event-codec.js';
import type { IdempotencyStore } from '../../libs/ports/idempotency-store.js';
import type { Logger } from '../../libs/ports/logger.js';
import type { BackoffPolicy } from '../../libs/core/backoff.js';
import { retryUntil } from './retry.js';
import { childSpanId, traceHeaders } from '../../libs/observability/trace-context.js';

/** What delivering a reconciliation step needs. */
export interface DeliveryDeps {
  readonly publisher: EventPublisher;
  readonly codec: EventCodec;
  readonly topics: TopicNames;
  readonly idempotency: IdempotencyStore;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly backoff: BackoffPolicy;
  /**
   * Topics a result may be sent to, with their partition counts (as the executor's). A request whose
   * reply address is not among them gets no result from the reconciler.
   */
  readonly replyTopics: Readonly<Record<string, number>>;
  /** How long a settled idempotency record is kept (as the executor's result TTL). */
  readonly resultTtlMs: number;
}

/** The outputs of one step: any part may be absent. */
export interface DeliveryPlan {
  /** Replaces the call's UNRESOLVED idempotency record (needs `request.idempotencyKey`). */
  readonly settle?: { readonly request: CaseRequest; readonly resolution: Resolution };
  readonly audit?: AuditRecordEvent;
  /** The superseding result, sent to the request's reply address. */
  readonly result?: { readonly request: CaseRequest; readonly event: ToolCallResultEvent };
}

/** What was delivered. `complete` is false when the signal stopped the retries first. */
export interface DeliveryReport {
  /** The UNRESOLVED record was replaced; false when there was none to replace (or not asked). */
  readonly settled: boolean;
  readonly audited: boolean;
  readonly answered: boolean;
  readonly complete: boolean;
}

/**
 * Delivers a reconciliation step in a fixed order: settle the idempotency record first (so a
 * duplicate arriving once the requester knows is answered the same way), then the audit record,
 * then the result (whoever sees the result can rely on the step being audited). Each part is
 * retried with backoff while its dependency is unreachable, until `signal` aborts; the parts not
 * done by then are reported missing. Safe to repeat: settle only replaces an UNRESOLVED record,
 * the audit store keeps one record per recordId, and a repeated result carries the same answer for
 * the same callId, which the requester already dedupes.
 */
export async function deliver(
  deps: DeliveryDeps,
  plan: DeliveryPlan,
  signal: AbortSignal,
): Promise<DeliveryReport> {
  const retry = { clock: deps.clock, backoff: deps.backoff, logger: deps.logger, signal };
  let settled = false;
  let audited = false;
  let answered = false;
  const report = (complete: boolean): DeliveryReport => ({ settled, audited, answered, complete });

  if (plan.settle !== undefined && plan.settle.request.idempotencyKey !== '') {
    const { request, resolution } = plan.settle;
    const done = await retryUntil(
      'settling the idempotency record',
      () =>
        deps.idempotency.settle(
          request.idempotencyKey,
          settledRecord(resolution, deps.clock.now()),
          deps.resultTtlMs,
        ),
      retry,
      { callId: request.callId },
    );
    if (done === undefined) return report(false);
    settled = done.value;
    if (!settled) {
      deps.logger.info(
        { callId: request.callId },
        'no UNRESOLVED idempotency record to settle (expired, released, or already settled)',
      );
    }
  }

  if (plan.audit !== undefined) {
    const event = plan.audit;
    const done = await retryUntil(
      'publishing the audit record',
      async () =>
        deps.publisher.publish(deps.topics.audit, [
          {
            key: event.tenant,
            value: await deps.codec.encode('audit', event),
            headers: traceHeaders(event.traceId, childSpanId()),
          },
        ]),
      retry,
      { callId: event.callId, recordId: event.recordId },
    );
    if (done === undefined) return report(false);
    audited = true;
  }

  if (plan.result !== undefined) {
    const { request, event } = plan.result;
    const partitions = deps.replyTopics[request.replyTopic];
    if (partitions === undefined || request.replyPartition >= partitions) {
      deps.logger.warn(
        { callId: request.callId, replyTopic: request.replyTopic, replyPartition: request.replyPartition },
        'the request names a reply address this reconciler may not send to; no result sent',
      );
    } else {
      const done = await retryUntil(
        'publishing the result',
        async () =>
          deps.publisher.publish(request.replyTopic, [
            {
              key: event.callId,
              value: await deps.codec.encode('results', event),
              headers: traceHeaders(event.traceId, childSpanId()),
              partition: request.replyPartition,
            },
          ]),
        retry,
        { callId: request.callId },
      );
      if (done === undefined) return report(false);
      answered = true;
    }
  }
  return report(true);
}
