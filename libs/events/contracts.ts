import type { Outcome } from '../core/outcome.js';

/**
 * TypeScript shapes of the Avro event contracts in `schemas/`. Field names and optionality mirror the
 * .avsc files exactly; a test checks every field of each schema against a sample of these types.
 * Avro unions with null appear as `T | null`.
 */

/** Published by the agent SDK to the calls topic, keyed by `resourceKey`. */
export interface ToolCallRequestedEvent {
  callId: string;
  providerCallId: string;
  tool: string;
  toolVersion: string | null;
  argumentsJson: string;
  tenant: string;
  taskId: string;
  step: number;
  index: number;
  idempotencyKey: string;
  resourceKey: string;
  principalAssertion: string;
  traceId: string;
  replyTopic: string;
  replyPartition: number;
  deadlineMs: number | null;
  requestedAtMs: number;
}

export interface ResultErrorEvent {
  code: string;
  message: string;
  retryable: boolean;
  retryAfterMs: number | null;
  suggestedFix: string | null;
}

/** Published by the executor (and the reconciler, for resolutions) to the requester's reply partition. */
export interface ToolCallResultEvent {
  callId: string;
  providerCallId: string;
  tool: string;
  tenant: string;
  taskId: string;
  outcome: Outcome;
  payloadJson: string | null;
  error: ResultErrorEvent | null;
  idempotencyKey: string | null;
  toolInvocations: number;
  source: 'executor' | 'reconciler' | 'operator';
  producerId: string;
  traceId: string;
  tokensIn: number;
  tokensOut: number;
  completedAtMs: number;
}

export interface StageDecisionEvent {
  stage: string;
  decision: string;
  reason: string | null;
  code: string | null;
  durationMs: number;
}

export interface AttemptEvent {
  attempt: number;
  startedAtMs: number;
  durationMs: number;
  result: string;
}

/** The MCP client of a request the MCP gateway audited; `name` is self-reported, untrusted. */
export interface McpClientEvent {
  name: string;
  protocolVersion: string;
  method: string;
}

/**
 * The business-rule policy one call was judged under (see `PolicyContext` in core/audit-record.ts);
 * `null` stands for a field the record does not have.
 */
export interface PolicyContextEvent {
  version: string;
  roles: string[] | null;
  /** Fact name → decimal text (sums) or integer text (counts). */
  facts: Record<string, string> | null;
  ruleId: string | null;
  shadow: ShadowDecisionEvent | null;
}

/** What a candidate policy would have decided about one call (see `ShadowDecision`). */
export interface ShadowDecisionEvent {
  version: string;
  /** allow | refuse */
  decision: string;
  ruleId: string | null;
}

/**
 * One per attempt, refusals included, and one per MCP request the MCP gateway served (`source`
 * `mcp-gateway`); consumed by the audit sink.
 */
export interface AuditRecordEvent {
  recordId: string;
  callId: string;
  tool: string;
  toolVersion: string | null;
  principalId: string;
  tenant: string;
  taskId: string;
  step: number;
  index: number;
  traceId: string;
  idempotencyKey: string | null;
  resourceKey: string | null;
  argumentsJson: string;
  resultJson: string | null;
  outcome: Outcome;
  errorCode: string | null;
  decisions: StageDecisionEvent[];
  attempts: AttemptEvent[];
  source: 'executor' | 'reconciler' | 'operator' | 'mcp-gateway';
  producerId: string;
  startedAtMs: number;
  finishedAtMs: number;
  /**
   * Set by the MCP gateway only. Optional here, unlike the other unions with null, so producers that
   * never set it need not write `null`; a decoded event always carries it (`null` when absent).
   */
  client?: McpClientEvent | null;
  /**
   * Set on the records the guard pipeline builds. Optional like `client`, for the producers that
   * never set it; a decoded event always carries it (`null` when absent).
   */
  policy?: PolicyContextEvent | null;
}

export type DeadLetterReason = 'UNRESOLVED' | 'EXHAUSTED' | 'POISON';

/** A call that needs the reconciler or a person; consumed into reconciliation cases. */
export interface DeadLetterEvent {
  deadLetterId: string;
  reason: DeadLetterReason;
  callId: string | null;
  tenant: string | null;
  tool: string | null;
  idempotencyKey: string | null;
  resourceKey: string | null;
  principalId: string | null;
  traceId: string | null;
  requestJson: string | null;
  errorCode: string;
  errorMessage: string;
  attemptsJson: string;
  lastKnownStateJson: string | null;
  originalTopic: string;
  originalPartition: number;
  originalOffset: string;
  originalKey: string | null;
  rawPayloadBase64: string | null;
  producerId: string;
  createdAtMs: number;
}

/** The four event kinds, each with its own topic and its own Avro schema file. */
export interface EventKinds {
  calls: ToolCallRequestedEvent;
  results: ToolCallResultEvent;
  audit: AuditRecordEvent;
  dlq: DeadLetterEvent;
}

export type EventKind = keyof EventKinds;

export const EVENT_KINDS: readonly EventKind[] = ['calls', 'results', 'audit', 'dlq'];

/** The schema file (under `schemas/`) of each kind. */
export const SCHEMA_FILE: Readonly<Record<EventKind, string>> = {
  calls: 'tool-call-requested.avsc',
  results: 'tool-call-result.avsc',
  audit: 'audit-record.avsc',
  dlq: 'dead-letter.avsc',
};
