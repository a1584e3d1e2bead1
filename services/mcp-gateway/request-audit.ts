import type { AuditRecord } from '../../libs/core/audit-record.js';
import { ERROR_CODES, type ErrorCode } from '../../libs/core/errors.js';
import { OUTCOMES, type Outcome } from '../../libs/core/outcome.js';
import type { AuditRecordEvent } from '../../libs/events/contracts.js';
import { toAuditEvent } from '../../libs/runtime/audit-event.js';
import type { McpRequestRecord, RequestOutcome } from './observer.js';

/** The `principalId` of a gateway record whose caller could not be identified. */
export const UNAUTHENTICATED_PRINCIPAL = 'unauthenticated';

/**
 * The `tenant` — and so the hash chain — of the gateway records whose caller could not be
 * identified (no token, a token that does not verify, claims without a tenant, a Host or Origin
 * refused before the token was read). The leading underscore keeps it apart from ordinary tenant
 * names; a token whose tenant claim is literally `_unidentified` would share the chain.
 */
export const UNIDENTIFIED_TENANT = '_unidentified';

/** The most characters of a tool name or refusal reason a gateway record keeps. */
const MAX_TEXT_CHARS = 200;

/**
 * Where the gateway hands the audit record of each MCP request, after its response finished.
 * Resolves once the record is durably stored (acknowledged by the broker); rejects when it could
 * not be within the publisher's bound — the gateway then logs and counts it as lost.
 */
export type McpAuditPublisher = (record: AuditRecord) => Promise<void>;

/**
 * The audit outcome and error code of each request outcome (a closed mapping):
 *
 * | request outcome         | outcome          | errorCode                                  |
 * | ----------------------- | ---------------- | ------------------------------------------ |
 * | `ok`                    | SUCCESS          | —                                          |
 * | `tool-success`          | SUCCESS          | —                                          |
 * | `tool-duplicate`        | DUPLICATE        | —                                          |
 * | `tool-refused`          | toolgate's own¹  | the result's error code¹                   |
 * | `tool-failed`           | EXECUTION_ERROR  | the result's error code¹ (else INTERNAL)   |
 * | `tool-unknown-outcome`  | UNRESOLVED       | UNRESOLVED                                 |
 * | `task-created`²         | UNRESOLVED       | UNRESOLVED                                 |
 * | `confirmation-required` | POLICY_VIOLATION | POLICY_VIOLATION                           |
 * | `unauthenticated`       | UNAUTHORIZED     | INVALID_PRINCIPAL                          |
 * | `forbidden`             | UNAUTHORIZED     | UNAUTHORIZED                               |
 * | `rejected`              | SCHEMA_INVALID   | SCHEMA_INVALID                             |
 * | `error`                 | EXECUTION_ERROR  | INTERNAL                                   |
 *
 * ¹ The outcome and error code of the result the call was answered with (e.g. UNKNOWN_TOOL for a
 * tool the caller may not see); the value in this table when the record carries none.
 * ² Answered with a task handle: the result is not known when the request ends. The executor's own
 * record of the call (same callId) carries its outcome.
 */
export const REQUEST_AUDIT_OUTCOMES: Readonly<
  Record<RequestOutcome, { readonly outcome: Outcome; readonly errorCode?: ErrorCode }>
> = {
  ok: { outcome: 'SUCCESS' },
  'tool-success': { outcome: 'SUCCESS' },
  'tool-duplicate': { outcome: 'DUPLICATE' },
  'tool-refused': { outcome: 'POLICY_VIOLATION', errorCode: 'POLICY_VIOLATION' },
  'tool-failed': { outcome: 'EXECUTION_ERROR', errorCode: 'INTERNAL' },
  'tool-unknown-outcome': { outcome: 'UNRESOLVED', errorCode: 'UNRESOLVED' },
  'task-created': { outcome: 'UNRESOLVED', errorCode: 'UNRESOLVED' },
  'confirmation-required': { outcome: 'POLICY_VIOLATION', errorCode: 'POLICY_VIOLATION' },
  unauthenticated: { outcome: 'UNAUTHORIZED', errorCode: 'INVALID_PRINCIPAL' },
  forbidden: { outcome: 'UNAUTHORIZED', errorCode: 'UNAUTHORIZED' },
  rejected: { outcome: 'SCHEMA_INVALID', errorCode: 'SCHEMA_INVALID' },
  error: { outcome: 'EXECUTION_ERROR', errorCode: 'INTERNAL' },
};

/** What {@link requestAuditRecord} needs besides the request: the ids and time the caller owns. */
export interface RequestAuditContext {
  /** The call id of a request that published no tools/call: fresh, unique per request. */
  readonly freshCallId: string;
  /** When the response finished, epoch ms. */
  readonly finishedAtMs: number;
}

/**
 * The audit record of one MCP request, from the gateway's {@link McpRequestRecord}. Pure and total.
 * - `callId`: the toolgate call id of a tools/call that was published — the executor's record of
 *   the same call has it too — else `freshCallId`;
 * - `tool`: the tool name for tools/call, else `mcp:<method>`;
 * - `principalId` / `tenant`: the mapped principal's, else {@link UNAUTHENTICATED_PRINCIPAL} /
 *   {@link UNIDENTIFIED_TENANT};
 * - `outcome` / `errorCode`: {@link REQUEST_AUDIT_OUTCOMES};
 * - `arguments`: always `{}` — the tool arguments may hold secrets; the executor's record keeps
 *   the ones the tool's audit allow-list names. No `resourceKey` either, so "who did it" queries
 *   count the executor's record of a call, never this one;
 * - `result`: what the gateway answered, `{ requestOutcome, reason? }` (the request outcome, and
 *   the OAuth or toolgate error code it was refused with), never the tool's output;
 * - `decisions`, `attempts`: empty; `taskId` empty, `step` and `index` 0;
 * - `client`: method, the client's self-reported name and the protocol revision;
 * - `traceId`: the published call's trace, else empty.
 * Nothing of the bearer token is in the request record, so nothing of it is here.
 */
export function requestAuditRecord(record: McpRequestRecord, context: RequestAuditContext): AuditRecord {
  const mapped = REQUEST_AUDIT_OUTCOMES[record.outcome] ?? REQUEST_AUDIT_OUTCOMES.error;
  const outcome = toolOutcome(record) ?? mapped.outcome;
  const errorCode =
    outcome === 'SUCCESS' || outcome === 'DUPLICATE'
      ? undefined
      : (toolErrorCode(record) ?? mapped.errorCode);
  const finishedAtMs = Math.round(context.finishedAtMs);
  const durationMs = Number.isFinite(record.durationMs) && record.durationMs > 0 ? record.durationMs : 0;
  return {
    callId: record.callId ?? context.freshCallId,
    tool:
      record.method === 'tools/call' && record.tool !== undefined && record.tool !== ''
        ? record.tool.slice(0, MAX_TEXT_CHARS)
        : `mcp:${record.method}`,
    principalId: record.principalId ?? UNAUTHENTICATED_PRINCIPAL,
    tenant: record.tenant ?? UNIDENTIFIED_TENANT,
    taskId: '',
    step: 0,
    index: 0,
    traceId: record.traceId ?? '',
    ...(record.idempotencyKey === undefined ? {} : { idempotencyKey: record.idempotencyKey }),
    arguments: {},
    result: {
      requestOutcome: record.outcome,
      ...(record.reason === undefined ? {} : { reason: record.reason.slice(0, MAX_TEXT_CHARS) }),
    },
    outcome,
    ...(errorCode === undefined ? {} : { errorCode }),
    decisions: [],
    attempts: [],
    startedAtMs: Math.max(0, finishedAtMs - Math.round(durationMs)),
    finishedAtMs,
    client: {
      name: record.clientName,
      protocolVersion: record.protocolVersion,
      method: record.method,
    },
  };
}

/** The audit-topic event of a gateway record: `source` `mcp-gateway`, `producerId` the gateway. Pure. */
export function requestAuditEvent(
  record: AuditRecord,
  meta: { readonly recordId: string; readonly producerId: string },
): AuditRecordEvent {
  return toAuditEvent(record, { ...meta, source: 'mcp-gateway' });
}

const REFUSALS: ReadonlySet<string> = new Set<Outcome>([
  'UNKNOWN_TOOL',
  'SCHEMA_INVALID',
  'UNAUTHORIZED',
  'RATE_LIMITED',
  'POLICY_VIOLATION',
]);
const OUTCOME_SET: ReadonlySet<string> = new Set(OUTCOMES);
const CODE_SET: ReadonlySet<string> = new Set(ERROR_CODES);

/** toolgate's outcome of a refused call, when the record carries one that is a refusal. */
function toolOutcome(record: McpRequestRecord): Outcome | undefined {
  if (record.outcome !== 'tool-refused') return undefined;
  const own = record.toolOutcome;
  return own !== undefined && OUTCOME_SET.has(own) && REFUSALS.has(own) ? (own as Outcome) : undefined;
}

/** The error code a refused or failed call was answered with, when it is one of toolgate's. */
function toolErrorCode(record: McpRequestRecord): ErrorCode | undefined {
  if (record.outcome !== 'tool-refused' && record.outcome !== 'tool-failed') return undefined;
  return record.reason !== undefined && CODE_SET.has(record.reason)
    ? (record.reason as ErrorCode)
    : undefined;
}
