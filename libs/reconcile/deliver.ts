import type { AuditRecordEvent, ToolCallResultEvent } from '../events/contracts.js';
import type { TopicNames } from '../events/topics.js';
import type { CaseRequest } from './case-request.js';
import {
  caseAuditEvent,
  resolutionResultEvent,
  settledRecord,
  type Resolution,
  type ResolutionMeta,
} from './resolution.js';
import type { ReconciliationCase } from '../ports/case-store.js';
import type { ToolDefinition } from '../registry/tool-definition.js';
import type { Clock } from '../core/clock.js';
import type { EventPublisher } from '../ports/event-bus.js';
import type { EventCodec } from '../events/event-codec.js';
import type { IdempotencyStore } from '../ports/idempotency-store.js';
import type { Logger } from '../ports/logger.js';
import type { Backoff } from '../core/backoff.js';
import { retryUntil } from './retry.js';
import { childSpanId, traceHeaders } from '../observability/trace-context.js';

/** What delivering a reconciliation step needs. */
export interface DeliveryDeps {
  readonly publisher: EventPublisher;
  readonly codec: EventCodec;
  readonly topics: TopicNames;
  readonly idempotency: IdempotencyStore;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly backoff: Backoff;
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
  /**
   * Records the resolution in the call's idempotency record (needs `request.idempotencyKey`):
   * replaces an UNRESOLVED record, or — when `heldBy` holds the key (see hold-call.ts) — completes
   * the held claim with it, so a re-run of the same turn is answered DUPLICATE with the resolution.
   */
  readonly settle?: {
    readonly request: CaseRequest;
    readonly resolution: Resolution;
    readonly heldBy?: string;
  };
  readonly audit?: AuditRecordEvent;
  /** The superseding result, sent to the request's reply address. */
  readonly result?: { readonly request: CaseRequest; readonly event: ToolCallResultEvent };
}

/** A resolution of one case, as {@link resolutionPlan} delivers it. */
export interface ResolutionStep {
  /** The case after its move to the resolved (or next) state. */
  readonly case: ReconciliationCase;
  /** The call's request; undefined when the case cannot tell it (nothing to settle or answer). */
  readonly request: CaseRequest | undefined;
  /** Who holds the call's idempotency key for this resolution, if anyone (see hold-call.ts). */
  readonly heldBy?: string;
  /** The call's tool, for its audit allow-list and version; undefined redacts every argument. */
  readonly tool: Pick<ToolDefinition, 'auditFields' | 'version'> | undefined;
  readonly resolution: Resolution;
  /** The audit decision's reason: which check answered what, or which person decided. */
  readonly reason: string;
  /** Unique per step and the same when the step is repeated (see `caseAuditEvent`). */
  readonly recordId: string;
  readonly meta: ResolutionMeta;
}

/**
 * What resolving a case delivers: the idempotency record settled and the superseding result (when
 * the request is known), and the step's audit record — a confirmed effect recorded as `pass`,
 * anything else as `refuse` with its error code. Pure.
 */
export function resolutionPlan(step: ResolutionStep): DeliveryPlan {
  const { request, resolution } = step;
  const audit = caseAuditEvent({
    case: step.case,
    request,
    outcome: resolution.outcome,
    ...(resolution.outcome === 'SUCCESS'
      ? { payload: resolution.payload }
      : { errorCode: resolution.error.code }),
    decision: resolution.outcome === 'SUCCESS' ? 'pass' : 'refuse',
    reason: step.reason,
    recordId: step.recordId,
    auditFields: step.tool?.auditFields,
    toolVersion: step.tool?.version,
    meta: step.meta,
  });
  return {
    ...(request === undefined
      ? {}
      : { settle: { request, resolution, ...(step.heldBy === undefined ? {} : { heldBy: step.heldBy }) } }),
    ...(audit === undefined ? {} : { audit }),
    ...(request === undefined
      ? {}
      : { result: { request, event: resolutionResultEvent(request, resolution, step.meta) } }),
  };
}

/** What was delivered. `complete` is false when the signal stopped the retries first. */
export interface DeliveryReport {
  /**
   * The resolution is in the idempotency record (an UNRESOLVED record replaced, or a held key
   * completed); false when there was nothing to settle (or not asked).
   */
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
 * done by then are reported missing. Safe to repeat: settle only replaces an UNRESOLVED record (and
 * completing a held key writes only while the key is still held by that owner),
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
    const { request, resolution, heldBy } = plan.settle;
    const done = await retryUntil(
      'settling the idempotency record',
      () => {
        const record = settledRecord(resolution, deps.clock.now());
        return heldBy === undefined
          ? deps.idempotency.settle(request.idempotencyKey, record, deps.resultTtlMs)
          : deps.idempotency.complete(request.idempotencyKey, heldBy, record, deps.resultTtlMs);
      },
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
