import type { ErrorCode } from '../core/errors.js';
import type { Outcome } from '../core/outcome.js';
import type { AuditRecord, StageDecision } from '../core/audit-record.js';
import type { CallState } from './call-state.js';

/** What a redacted argument value is replaced with in the audit record. */
export const REDACTED = '[redacted]';

/**
 * Reduces a call's arguments to an allow-list: a top-level field named in `allowed` is kept verbatim,
 * every other field keeps its name but its value becomes {@link REDACTED}. With no allow-list (the
 * tool is unknown, so nobody declared what is safe to keep) every value is redacted.
 *
 * Allow-listing is by top-level field name only: a kept field is kept whole, so a tool must not
 * allow-list an object field that nests a secret. Never throws; a non-object input yields `{}`.
 */
export function redactArguments(
  args: unknown,
  allowed: readonly string[] | undefined,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return out;
  const keep = new Set(allowed ?? []);
  for (const key of Object.keys(args)) {
    // Assigning through defineProperty keeps a model-sent "__proto__" key an ordinary field.
    Object.defineProperty(out, key, {
      value: keep.has(key) ? (args as Record<string, unknown>)[key] : REDACTED,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** The facts about one finished pipeline run that the audit record is made of. */
export interface AuditInput {
  readonly state: CallState;
  readonly outcome: Outcome;
  readonly errorCode?: ErrorCode;
  /** The payload a `finish` carried (a duplicate's stored, already-redacted result). */
  readonly finishPayload?: unknown;
  readonly decisions: readonly StageDecision[];
  readonly startedAtMs: number;
  readonly finishedAtMs: number;
  /** The active policy's version: recorded even when the rules never judged the call. */
  readonly policyVersion: string;
}

/**
 * Builds the one audit record of one pipeline run, refusals included.
 *
 * - `arguments`: the call's arguments as the model sent them, reduced to the resolved tool's
 *   `auditFields` (see {@link redactArguments}); fully redacted when the tool did not resolve or
 *   the arguments failed validation (an allow-list vouches for valid values only: a model can put
 *   a token into an allow-listed field whose schema then refuses it).
 * - `result`: only output that passed output validation (`state.output`), or, for a DUPLICATE, the
 *   stored result, which was validated and redacted when first produced. Raw tool output is never
 *   recorded.
 *
 * Pure: reads `state`, never mutates it.
 */
export function buildAuditRecord(input: AuditInput): AuditRecord {
  const { state } = input;
  const { ctx, call, tool } = state;
  const result =
    state.output !== undefined
      ? state.output
      : input.outcome === 'DUPLICATE'
        ? input.finishPayload
        : undefined;
  const idempotencyKey = state.idempotencyKey ?? state.providedKey;
  const refusedInput = input.decisions.some((d) => d.stage === 'validate-input' && d.decision !== 'pass');
  return {
    callId: call.id,
    tool: call.name,
    ...(tool === undefined ? {} : { toolVersion: tool.version }),
    principalId: ctx.principal.id,
    tenant: ctx.tenant,
    taskId: ctx.taskId,
    step: ctx.step,
    index: ctx.index,
    traceId: ctx.traceId,
    ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
    ...(state.resourceKey === undefined ? {} : { resourceKey: state.resourceKey }),
    arguments: redactArguments(call.arguments, refusedInput ? undefined : tool?.auditFields),
    ...(result === undefined ? {} : { result }),
    outcome: input.outcome,
    ...(input.errorCode === undefined ? {} : { errorCode: input.errorCode }),
    decisions: [...input.decisions],
    attempts: [...state.attempts],
    startedAtMs: input.startedAtMs,
    finishedAtMs: input.finishedAtMs,
    policy: state.policy ?? { version: input.policyVersion },
  };
}
