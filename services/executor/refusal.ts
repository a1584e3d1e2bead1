import type { ToolgateError } from '../../libs/core/errors.js';
import type { ToolCallResult } from '../../libs/core/types.js';
import type { ToolCallRequestedEvent } from '../../libs/events/contracts.js';
import type { AuditRecord, StageName } from '../../libs/core/audit-record.js';
import { redactArguments } from '../../libs/pipeline/build-audit-record.js';
import type { PipelineRun } from '../../libs/pipeline/guard-pipeline.js';
import { toResultError } from '../../libs/core/result-error.js';

/** A refusal the executor makes before the guard pipeline runs. */
export interface RefusalInput {
  readonly event: ToolCallRequestedEvent;
  readonly traceId: string;
  /** The verified principal's id, or `unverified`. */
  readonly principalId: string;
  /** The parsed arguments when they parsed; every value is redacted in the audit record either way. */
  readonly args: unknown;
  /** The stage the refusal stands for in the audit record (`authorize`, `validate-input`). */
  readonly stage: StageName;
  /** What the result carries. */
  readonly error: ToolgateError;
  /** The audit decision's reason (may be more specific than the model-facing message). */
  readonly auditReason: string;
  readonly startedAtMs: number;
  readonly finishedAtMs: number;
}

/**
 * The result and the audit record of a call refused before the pipeline (unverifiable principal,
 * foreign tenant, arguments that are not an object), shaped exactly like a pipeline run so the rest
 * of the executor treats both alike. The tool was not reached (`toolInvocations: 0`), and because no
 * tool definition was consulted, no argument value is kept in the audit record (fail-safe
 * redaction). Authorization refusals carry no suggested fix (see `toResultError`). Pure.
 */
export function refusalRun(input: RefusalInput): PipelineRun {
  const { event, error } = input;
  const idempotencyKey = event.idempotencyKey === '' ? undefined : event.idempotencyKey;
  const result: ToolCallResult = {
    callId: event.callId,
    tool: event.tool,
    outcome: error.outcome,
    error: toResultError(error),
    ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
    toolInvocations: 0,
  };
  const audit: AuditRecord = {
    callId: event.callId,
    tool: event.tool,
    ...(event.toolVersion === null ? {} : { toolVersion: event.toolVersion }),
    principalId: input.principalId,
    tenant: event.tenant,
    taskId: event.taskId,
    step: event.step,
    index: event.index,
    traceId: input.traceId,
    ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
    ...(event.resourceKey === '' ? {} : { resourceKey: event.resourceKey }),
    arguments: redactArguments(input.args, undefined),
    outcome: error.outcome,
    errorCode: error.code,
    decisions: [
      {
        stage: input.stage,
        decision: 'refuse',
        reason: input.auditReason,
        code: error.code,
        durationMs: Math.max(0, input.finishedAtMs - input.startedAtMs),
      },
    ],
    attempts: [],
    startedAtMs: input.startedAtMs,
    finishedAtMs: input.finishedAtMs,
  };
  return { result, audit };
}
