import { argumentsFingerprint } from '../../libs/core/idempotency-key.js';
import type { DeadLetterInput } from '../../libs/ports/case-store.js';
import type { IdempotencyStore } from '../../libs/ports/idempotency-store.js';

/** The ids and times that make one dead-lettered refund distinct from another. */
export interface DeadLetteredRefundSpec {
  readonly callId: string;
  readonly providerCallId: string;
  readonly idempotencyKey: string;
  readonly deadLetterId: string;
  /** Where the requester waits for the answer (partition 1 of it). */
  readonly replyTopic: string;
  readonly arguments: Record<string, unknown>;
  /** The request was made a minute before this, dead-lettered 30 s before it. */
  readonly nowMs: number;
  readonly lastKnownStateJson: string | null;
}

/**
 * The dead letter of an `issue_refund` call (tenant t1, order O-5512, by agent-ann) that timed out
 * with its outcome unknown, carrying the full request so a case opened from it can be redriven.
 */
export function deadLetteredRefund(spec: DeadLetteredRefundSpec): DeadLetterInput {
  const request = {
    callId: spec.callId,
    providerCallId: spec.providerCallId,
    tool: 'issue_refund',
    toolVersion: '1.0.0',
    tenant: 't1',
    taskId: 'task-1',
    step: 1,
    index: 0,
    idempotencyKey: spec.idempotencyKey,
    resourceKey: 't1:order:O-5512',
    principalId: 'agent-ann',
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    replyTopic: spec.replyTopic,
    replyPartition: 1,
    deadlineMs: null,
    requestedAtMs: spec.nowMs - 60_000,
    arguments: spec.arguments,
  };
  return {
    deadLetterId: spec.deadLetterId,
    reason: 'UNRESOLVED',
    callId: spec.callId,
    tenant: 't1',
    tool: 'issue_refund',
    idempotencyKey: spec.idempotencyKey,
    resourceKey: request.resourceKey,
    principalId: 'agent-ann',
    traceId: request.traceId,
    requestJson: JSON.stringify(request),
    errorCode: 'TIMEOUT',
    errorMessage: 'The payments service did not answer in time.',
    attemptsJson: '[]',
    lastKnownStateJson: spec.lastKnownStateJson,
    createdAtMs: spec.nowMs - 30_000,
  };
}

/**
 * Leaves an UNRESOLVED record for `key` as an executor does when it cannot tell whether the effect
 * happened: claimed by executor-1 for `args`, then completed, kept `ttlMs`. Throws when the key was
 * not free to claim.
 */
export async function leaveUnresolved(
  store: IdempotencyStore,
  key: string,
  args: Record<string, unknown>,
  completedAtMs: number,
  ttlMs: number,
): Promise<void> {
  const claim = await store.claim(key, argumentsFingerprint(args), 'executor-1', 60_000);
  if (claim.kind !== 'claimed') throw new Error(`unexpected claim ${claim.kind}`);
  await store.complete(
    key,
    'executor-1',
    { outcome: 'UNRESOLVED', result: { code: 'UNRESOLVED', message: 'unknown' }, completedAtMs },
    ttlMs,
  );
}
