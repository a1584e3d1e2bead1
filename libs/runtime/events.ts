import type { ToolCallResult } from '../core/types.js';
import type { DeadLetterEvent, DeadLetterReason, ToolCallRequestedEvent } from '../events/contracts.js';
import { argumentsFingerprint } from '../core/idempotency-key.js';
import type { AuditRecord } from '../core/audit-record.js';
import { redactArguments } from '../pipeline/build-audit-record.js';
import type { BusMessage } from '../ports/event-bus.js';
import { createHash } from 'node:crypto';

/**
 * The events every service builds the same way: dead letters — a call's (UNRESOLVED or EXHAUSTED)
 * and a poison message's, whichever service found it — and the encoders of the fields every event
 * shares (JSON text that never throws, whole epoch milliseconds). Pure.
 */

/**
 * JSON text of a value headed for an event field. Results and audit payloads passed output
 * validation, so they are JSON data; should one still not serialize (a BigInt, a cycle), the field
 * carries a marker instead of failing the whole call's publication. Total.
 */
export function jsonText(value: unknown): string {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? 'null' : text;
  } catch {
    return '"[unserializable]"';
  }
}

/** An epoch-ms value as a whole number, as Avro `long` fields require. */
export function wholeMs(ms: number): number {
  return Number.isFinite(ms) ? Math.round(ms) : 0;
}

/**
 * How many bytes of an undecodable message its dead letter keeps by default: none. The message is
 * on the calls topic at the position the dead letter records, and its bytes may hold argument
 * values (secrets), which must not travel beyond that topic; the dead letter carries their size
 * and SHA-256 instead. An operator who wants captures for diagnosis sets a cap
 * (`POISON_CAPTURE_BYTES`), accepting that copy.
 */
export const DEFAULT_MAX_RAW_PAYLOAD_BYTES = 0;

/** Error codes that, on a state-changing call, mean "gave up after the retries it was allowed". */
const EXHAUSTION_CODES: ReadonlySet<string> = new Set(['TIMEOUT', 'SERVER_ERROR', 'BREAKER_OPEN']);

/**
 * Whether a finished call needs a person or the reconciler:
 * - UNRESOLVED (the effect may or may not have happened) always does;
 * - EXECUTION_ERROR with TIMEOUT, SERVER_ERROR or BREAKER_OPEN after the tool's retries is EXHAUSTED
 *   when the tool changes state: the action the user asked for was not done and will not be retried
 *   by itself. A read-only call that failed leaves nothing to reconcile (the model may ask again), so
 *   it is not dead-lettered; `stateChanging` undefined (tool not resolvable) counts as state-changing.
 */
export function deadLetterReasonFor(
  result: ToolCallResult,
  stateChanging: boolean | undefined,
): Exclude<DeadLetterReason, 'POISON'> | undefined {
  if (result.outcome === 'UNRESOLVED') return 'UNRESOLVED';
  if (
    result.outcome === 'EXECUTION_ERROR' &&
    result.error !== undefined &&
    EXHAUSTION_CODES.has(result.error.code) &&
    stateChanging !== false
  ) {
    return 'EXHAUSTED';
  }
  return undefined;
}

/**
 * The request as a dead letter keeps it: every field except the signed principal assertion, which
 * is replaced by the verified principal's id (null when unverified), and the arguments reduced to
 * `keptArguments` — the tool's audit allow-listed fields, every other value redacted, exactly as the
 * audit record keeps them — so no secret in the arguments travels past the calls topic. Reconciling
 * needs the full arguments (a status check, a re-submission): the reconciler and the ops CLI read the
 * original call back from the calls topic at the dead letter's `originalTopic` / `originalPartition`
 * / `originalOffset`. `argumentsRedacted: true` tells them to; `argumentsFingerprint` (SHA-256 of the
 * canonical arguments, as the idempotency record keeps it) lets a resolution record the call's
 * answer under its key without the arguments. Arguments that were not a JSON object are dropped.
 */
export function requestSummary(
  request: ToolCallRequestedEvent,
  principalId: string | null,
  keptArguments: (args: Record<string, unknown>) => Record<string, unknown>,
): Record<string, unknown> {
  let args: unknown;
  try {
    args = JSON.parse(request.argumentsJson);
  } catch {
    args = undefined;
  }
  const isObject = args !== null && typeof args === 'object' && !Array.isArray(args);
  return {
    callId: request.callId,
    providerCallId: request.providerCallId,
    tool: request.tool,
    toolVersion: request.toolVersion,
    tenant: request.tenant,
    taskId: request.taskId,
    step: request.step,
    index: request.index,
    idempotencyKey: request.idempotencyKey,
    resourceKey: request.resourceKey,
    principalId,
    traceId: request.traceId,
    replyTopic: request.replyTopic,
    replyPartition: request.replyPartition,
    deadlineMs: request.deadlineMs,
    requestedAtMs: request.requestedAtMs,
    ...(isObject
      ? {
          arguments: keptArguments(args as Record<string, unknown>),
          argumentsRedacted: true,
          argumentsFingerprint: argumentsFingerprint(args),
        }
      : {}),
  };
}

export interface CallDeadLetterInput {
  readonly reason: Exclude<DeadLetterReason, 'POISON'>;
  readonly request: ToolCallRequestedEvent;
  readonly message: BusMessage;
  readonly result: ToolCallResult;
  readonly audit: AuditRecord;
  readonly principalId: string;
  readonly traceId: string;
  readonly producerId: string;
  readonly nowMs: number;
}

/**
 * The dead letter of a call that ran (or was claimed) and ended UNRESOLVED or EXHAUSTED, with the
 * full context a person needs: the request (see {@link requestSummary}), the idempotency key,
 * the attempt history, and the last known state (outcome, error, invocations, stage decisions).
 *
 * `deadLetterId` is `<reason>:<callId>`: a redelivered call dead-letters under the same id, and the
 * case store (idempotent on call id and dead-letter id) keeps one case. Pure.
 */
export function callDeadLetter(input: CallDeadLetterInput): DeadLetterEvent {
  const { request, message, result, audit } = input;
  return {
    deadLetterId: `${input.reason}:${request.callId}`,
    reason: input.reason,
    callId: request.callId,
    tenant: request.tenant,
    tool: request.tool,
    idempotencyKey: result.idempotencyKey ?? (request.idempotencyKey || null),
    resourceKey: audit.resourceKey ?? (request.resourceKey || null),
    principalId: input.principalId,
    traceId: input.traceId,
    // The audit record's arguments are the tool's allow-listed fields, the rest redacted.
    requestJson: jsonText(requestSummary(request, input.principalId, () => audit.arguments)),
    errorCode: result.error?.code ?? result.outcome,
    errorMessage: result.error?.message ?? result.outcome,
    attemptsJson: jsonText(audit.attempts),
    lastKnownStateJson: jsonText({
      outcome: result.outcome,
      error: result.error ?? null,
      toolInvocations: result.toolInvocations,
      toolVersion: audit.toolVersion ?? null,
      decisions: audit.decisions,
      finishedAtMs: audit.finishedAtMs,
    }),
    originalTopic: message.topic,
    originalPartition: message.partition,
    originalOffset: message.offset,
    originalKey: message.key,
    rawPayloadBase64: null,
    producerId: input.producerId,
    createdAtMs: wholeMs(input.nowMs),
  };
}

/**
 * Where a poison message was, as its dead letter names it: reason POISON, code MALFORMED_EVENT, the
 * original coordinates, and `deadLetterId` `POISON:<topic>/<partition>@<offset>` — by position, so
 * a redelivered message dead-letters under the same id and opens one case. Every service that
 * dead-letters unusable messages (executor, audit sink, reconciler) starts from this. Pure.
 */
export function poisonOrigin(
  message: BusMessage,
): Pick<
  DeadLetterEvent,
  'deadLetterId' | 'reason' | 'errorCode' | 'originalTopic' | 'originalPartition' | 'originalOffset'
> {
  return {
    deadLetterId: `POISON:${message.topic}/${message.partition}@${message.offset}`,
    reason: 'POISON',
    errorCode: 'MALFORMED_EVENT',
    originalTopic: message.topic,
    originalPartition: message.partition,
    originalOffset: message.offset,
  };
}

export interface PoisonInput {
  readonly message: BusMessage;
  readonly errorMessage: string;
  /** Set when the event decoded but cannot be run or answered properly (see checkEnvelope). */
  readonly request?: ToolCallRequestedEvent;
  readonly traceId?: string;
  readonly producerId: string;
  readonly nowMs: number;
  readonly maxRawBytes?: number;
}

/**
 * The dead letter of a message that cannot be handled as a call: undecodable bytes (wrong magic
 * byte, unknown schema id, truncated Avro, oversized), or a decoded request without a usable call id
 * or reply address, or with a malformed envelope. Of undecodable bytes, `lastKnownStateJson` keeps
 * the size and SHA-256 (`payloadBytes`, `payloadSha256`), and `rawPayloadBase64` the first
 * `maxRawBytes` of them (default none: see {@link DEFAULT_MAX_RAW_PAYLOAD_BYTES}); a decoded
 * request is kept as its summary instead, every argument value redacted and the signed assertion
 * not copied.
 *
 * `deadLetterId` is `POISON:<topic>/<partition>@<offset>`: redelivering the same message yields the
 * same id. Pure.
 */
export function poisonDeadLetter(input: PoisonInput): DeadLetterEvent {
  const { message, request } = input;
  const cap = input.maxRawBytes ?? DEFAULT_MAX_RAW_PAYLOAD_BYTES;
  const raw =
    request === undefined && cap > 0
      ? message.value.subarray(0, Math.min(cap, message.value.length))
      : undefined;
  const orNull = (value: string | undefined): string | null =>
    value === undefined || value === '' ? null : value;
  return {
    ...poisonOrigin(message),
    callId: orNull(request?.callId),
    tenant: orNull(request?.tenant),
    tool: orNull(request?.tool),
    idempotencyKey: orNull(request?.idempotencyKey),
    resourceKey: orNull(request?.resourceKey),
    principalId: null,
    traceId: orNull(input.traceId ?? request?.traceId),
    // No tool was resolved, so nobody declared a field safe to keep: every value is redacted.
    requestJson:
      request === undefined
        ? null
        : jsonText(requestSummary(request, null, (args) => redactArguments(args, undefined))),
    errorMessage: input.errorMessage,
    attemptsJson: '[]',
    lastKnownStateJson: jsonText({
      payloadBytes: message.value.length,
      payloadSha256: createHash('sha256').update(message.value).digest('hex'),
      capturedBytes: raw?.length ?? 0,
      decoded: request !== undefined,
    }),
    originalKey: message.key,
    rawPayloadBase64: raw === undefined ? null : raw.toString('base64'),
    producerId: input.producerId,
    createdAtMs: wholeMs(input.nowMs),
  };
}
