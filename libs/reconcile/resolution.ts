import type { ErrorCode } from '../core/errors.js';
import { tokenEquivalents } from '../cost/token-equivalents.js';
import type { Outcome } from '../core/outcome.js';
import type { ResultError } from '../core/types.js';
import type { AuditRecordEvent, ToolCallResultEvent } from '../events/contracts.js';
import { redactArguments } from '../pipeline/build-audit-record.js';
import type { ReconciliationCase } from '../ports/case-store.js';
import type { StoredResult } from '../ports/idempotency-store.js';
import type { CaseRequest } from './case-request.js';

/**
 * What a reconciled call turned out to be, as the requester and later duplicates will see it:
 * SUCCESS with the validated, redacted output (the effect happened), or EXECUTION_ERROR (the effect
 * did not happen — or it did, but its output could not be shown: BAD_OUTPUT, not retryable).
 */
export type Resolution =
  | { readonly outcome: 'SUCCESS'; readonly payload: unknown }
  | { readonly outcome: 'EXECUTION_ERROR'; readonly error: ResultError };

/** Who settled it: the automatic status checker or a person through the ops tools. */
export type ResolutionSource = 'reconciler' | 'operator';

/** The model-readable error of a call a status check or a person found was NOT carried out. */
export function notAppliedError(byPerson: boolean): ResultError {
  const how = byPerson ? 'a person confirmed' : 'a status check confirmed';
  return {
    code: 'TIMEOUT',
    message: `The earlier call's outcome was unknown; ${how} it was not carried out. It is safe to try again as a new step.`,
    retryable: true,
  };
}

/**
 * The idempotency record that replaces the UNRESOLVED one (IdempotencyStore.settle), in the form the
 * pipeline itself stores: SUCCESS with the payload, otherwise the outcome with `{ code, message }`, so
 * a later duplicate is answered exactly as it would be had the call ended that way. Pure.
 */
export function settledRecord(resolution: Resolution, nowMs: number): StoredResult {
  return resolution.outcome === 'SUCCESS'
    ? { outcome: 'SUCCESS', result: resolution.payload ?? null, completedAtMs: Math.floor(nowMs) }
    : {
        outcome: 'EXECUTION_ERROR',
        result: { code: resolution.error.code, message: resolution.error.message },
        completedAtMs: Math.floor(nowMs),
      };
}

/** Who produced an event and when. */
export interface ResolutionMeta {
  readonly source: ResolutionSource;
  /** The reconciler instance, or `operator:<id>`. */
  readonly producerId: string;
  readonly nowMs: number;
}

/**
 * The result event that supersedes the requester's UNRESOLVED: same callId, sent to the original
 * reply address by the caller. `toolInvocations` is 0: reconciling never runs the tool. Pure.
 */
export function resolutionResultEvent(
  request: CaseRequest,
  resolution: Resolution,
  meta: ResolutionMeta,
): ToolCallResultEvent {
  const payloadJson = resolution.outcome === 'SUCCESS' ? jsonText(resolution.payload ?? null) : null;
  const error = resolution.outcome === 'SUCCESS' ? undefined : resolution.error;
  return {
    callId: request.callId,
    providerCallId: request.providerCallId,
    tool: request.tool,
    tenant: request.tenant,
    taskId: request.taskId,
    outcome: resolution.outcome,
    payloadJson,
    error:
      error === undefined
        ? null
        : {
            code: error.code,
            message: error.message,
            retryable: error.retryable,
            retryAfterMs: error.retryAfterMs ?? null,
            suggestedFix: error.suggestedFix ?? null,
          },
    idempotencyKey: request.idempotencyKey === '' ? null : request.idempotencyKey,
    toolInvocations: 0,
    source: meta.source,
    producerId: meta.producerId,
    traceId: request.traceId,
    tokensIn: 0,
    // The cost model's figure for what the model reads back (libs/cost), as on the executor's results.
    tokensOut: Math.min(
      2_147_483_647,
      tokenEquivalents(resolution.outcome === 'SUCCESS' ? { payload: resolution.payload ?? null } : { error })
        .tokensOut,
    ),
    completedAtMs: Math.floor(meta.nowMs),
  };
}

/** One reconciliation step to record in the audit log. */
export interface CaseAuditInput {
  readonly case: ReconciliationCase;
  readonly request: CaseRequest | undefined;
  /** What the call is known to be after this step. */
  readonly outcome: Outcome;
  readonly errorCode?: ErrorCode;
  /** The validated, redacted output, for a SUCCESS. */
  readonly payload?: unknown;
  /** `pass` when the effect is confirmed, `refuse` when it is known not to have happened. */
  readonly decision: 'pass' | 'refuse' | 'short-circuit';
  /** Why, in a line: which check answered what, or which person decided. */
  readonly reason: string;
  /** Unique per step and the same when the step is repeated, so a repeat is stored once. */
  readonly recordId: string;
  /** The tool's audit allow-list; undefined (unknown tool) redacts every argument. */
  readonly auditFields: readonly string[] | undefined;
  readonly toolVersion: string | undefined;
  readonly meta: ResolutionMeta;
}

/**
 * The audit event of a reconciliation step, chained with the call's own attempts (same tenant chain,
 * same callId, resource key and trace). Arguments pass the tool's audit allow-list like the
 * executor's; the decision is recorded under stage `execute`, where the outcome was lost.
 * A person's step (source 'operator') has the operator (`meta.producerId`) as principal, and its
 * reason names the case and the call's original principal ("on behalf of ..."); the checker's steps
 * keep the call's principal. Undefined when the case names no call or tenant (an undecodable event):
 * there is no chain to put it in, and the case's own history keeps who did what. Pure.
 */
export function caseAuditEvent(input: CaseAuditInput): AuditRecordEvent | undefined {
  const { case: c, request, meta } = input;
  const callId = c.callId ?? request?.callId;
  const tenant = c.tenant ?? request?.tenant;
  const tool = c.tool ?? request?.tool;
  if (!callId || !tenant || !tool) return undefined;
  const caller = c.principalId ?? request?.principalId ?? null;
  // A person's step is theirs: it is audited under the operator's principal, with the case it acted
  // on and the original caller named in the decision's reason (the call's own records keep that
  // caller as their principal, and the same callId links them).
  const byPerson = meta.source === 'operator';
  const reason = byPerson
    ? `${input.reason} [case ${c.caseId}; on behalf of ${caller ?? 'an unknown caller'}]`
    : input.reason;
  const resourceKey = c.resourceKey ?? request?.resourceKey;
  const idempotencyKey = c.idempotencyKey ?? request?.idempotencyKey;
  return {
    recordId: input.recordId,
    callId,
    tool,
    toolVersion: input.toolVersion ?? null,
    principalId: byPerson ? meta.producerId : (caller ?? meta.producerId),
    tenant,
    taskId: request?.taskId ?? '',
    step: request?.step ?? 0,
    index: request?.index ?? 0,
    traceId: c.traceId ?? request?.traceId ?? '',
    idempotencyKey: idempotencyKey || null,
    resourceKey: resourceKey || null,
    argumentsJson: jsonText(redactArguments(request?.arguments ?? {}, input.auditFields)),
    resultJson: input.outcome === 'SUCCESS' && input.payload !== undefined ? jsonText(input.payload) : null,
    outcome: input.outcome,
    errorCode: input.errorCode ?? null,
    decisions: [
      {
        stage: 'execute',
        decision: input.decision,
        reason,
        code: input.errorCode ?? null,
        durationMs: 0,
      },
    ],
    attempts: [],
    source: meta.source,
    producerId: meta.producerId,
    startedAtMs: Math.floor(meta.nowMs),
    finishedAtMs: Math.floor(meta.nowMs),
  };
}

function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    return '"[unserializable]"';
  }
}
