import type { AuditRecordEvent, DeadLetterEvent } from '../../libs/events/contracts.js';
import type { BusMessage } from '../../libs/ports/event-bus.js';
import { poisonOrigin } from '../../libs/runtime/events.js';

/** Bytes of an unstorable audit record its dead letter keeps by default (see auditPoisonLetter). */
export const DEFAULT_AUDIT_CAPTURE_BYTES = 64 * 1024;

export interface AuditPoisonInput {
  readonly message: BusMessage;
  /** Why it cannot be stored; a codec or envelope message, which names fields, never values. */
  readonly errorMessage: string;
  /** Set when the bytes decoded but the record cannot be stored as it is. */
  readonly event?: AuditRecordEvent;
  readonly producerId: string;
  readonly nowMs: number;
  readonly maxRawBytes?: number;
}

/**
 * The dead letter of an audit-topic message the sink cannot store: undecodable bytes or a decoded
 * record the audit store refuses. Its raw bytes (capped at `maxRawBytes`) travel base64-encoded, so a
 * person can recover the record; audit events are already reduced to the tools' allow-lists, so they
 * carry no secret.
 *
 * `callId` is deliberately null even when the record names a call: the case store keeps one case per
 * call id, and this unstorable record must not be merged into (or hide behind) that call's own
 * reconciliation case. The record's ids go into `lastKnownStateJson` instead.
 *
 * `deadLetterId` is `POISON:<topic>/<partition>@<offset>`, so a redelivered message dead-letters
 * under the same id and opens one case. Pure.
 */
export function auditPoisonLetter(input: AuditPoisonInput): DeadLetterEvent {
  const { message, event } = input;
  const cap = Math.max(0, input.maxRawBytes ?? DEFAULT_AUDIT_CAPTURE_BYTES);
  const raw = message.value.subarray(0, cap);
  return {
    ...poisonOrigin(message),
    callId: null,
    tenant: nonEmpty(event?.tenant),
    tool: nonEmpty(event?.tool),
    idempotencyKey: null,
    resourceKey: null,
    principalId: null,
    traceId: nonEmpty(event?.traceId),
    requestJson: null,
    errorMessage: input.errorMessage,
    attemptsJson: '[]',
    lastKnownStateJson: JSON.stringify({
      kind: 'audit-record',
      decoded: event !== undefined,
      recordId: event?.recordId ?? null,
      callId: event?.callId ?? null,
      payloadBytes: message.value.length,
      capturedBytes: raw.length,
    }),
    originalKey: message.key === '' ? null : message.key,
    rawPayloadBase64: raw.toString('base64'),
    producerId: input.producerId,
    createdAtMs: Math.floor(input.nowMs),
  };
}

function nonEmpty(value: string | undefined): string | null {
  return value === undefined || value === '' ? null : value;
}
