import type { Outcome } from './outcome.js';
import type { ErrorCode } from './errors.js';

/** The stages of the guard pipeline, in order. The executing order is the array in guards/stages.ts. */
export type StageName =
  | 'verify-principal'
  | 'parse-arguments'
  | 'resolve'
  | 'validate-input'
  | 'authorize'
  | 'rate-limit'
  | 'business-rules'
  | 'idempotency'
  | 'execute'
  | 'validate-output';

/** One stage's decision about one call. Refusals are recorded exactly like passes. */
export interface StageDecision {
  readonly stage: StageName;
  readonly decision: 'pass' | 'refuse' | 'short-circuit';
  /** Model-safe reason for a refusal or short-circuit (e.g. "duplicate of an earlier call"). */
  readonly reason?: string;
  readonly code?: ErrorCode;
  readonly durationMs: number;
}

/** One execution attempt of the tool itself (stage 6 may make several). */
export interface AttemptRecord {
  readonly attempt: number;
  readonly startedAtMs: number;
  readonly durationMs: number;
  /** 'ok', or the classified error code of this attempt. */
  readonly result: 'ok' | ErrorCode;
}

/**
 * Everything the audit log keeps about one attempt to run one call: who, what (arguments reduced to
 * the tool's audit allow-list; other fields appear as "[redacted]"), every stage decision and the
 * outcome. Never contains secrets, tokens or fields outside the allow-lists.
 */
export interface AuditRecord {
  readonly callId: string;
  readonly tool: string;
  readonly toolVersion?: string;
  readonly principalId: string;
  readonly tenant: string;
  readonly taskId: string;
  readonly step: number;
  readonly index: number;
  readonly traceId: string;
  readonly idempotencyKey?: string;
  readonly resourceKey?: string;
  readonly arguments: Record<string, unknown>;
  readonly result?: unknown;
  readonly outcome: Outcome;
  readonly errorCode?: ErrorCode;
  readonly decisions: readonly StageDecision[];
  readonly attempts: readonly AttemptRecord[];
  readonly startedAtMs: number;
  readonly finishedAtMs: number;
  /**
   * The MCP client that made the request, when it came through the MCP gateway (its records only):
   * the JSON-RPC `method` (the gateway's closed set: `tools/call`, `tools/list`, …, `other`), the
   * protocol revision it was served at, and the client's `name` — self-reported, untrusted. Values the
   * gateway could not read are `unknown`.
   */
  readonly client?: {
    readonly name: string;
    readonly protocolVersion: string;
    readonly method: string;
  };
  /** The business-rule policy this call was judged under; on every record the pipeline builds. */
  readonly policy?: PolicyContext;
}

/**
 * What the business rules knew when they judged one call, so a candidate policy can be replayed
 * against past calls (`toolgate policy replay`) without executing anything.
 */
export interface PolicyContext {
  /** The version of the policy in force (`PolicyEngine.version`). */
  readonly version: string;
  /** The verified principal's roles, when the rules judged the call. */
  readonly roles?: readonly string[];
  /**
   * The aggregate facts the rules saw, by fact name, when the rules judged the call: decimal text
   * for sums (`"99.98"`), integer text for counts (`"3"`). Each is the total as it would stand with
   * this call counted.
   */
  readonly facts?: Readonly<Record<string, string>>;
  /** The rule that refused the call, when the rules refused it. */
  readonly ruleId?: string;
  /** A candidate policy run beside the active one, when the executor has one (never acted on). */
  readonly shadow?: ShadowDecision;
}

/** What a shadow (candidate) policy would have decided about one call. */
export interface ShadowDecision {
  readonly version: string;
  readonly decision: 'allow' | 'refuse';
  /** The rule that would have refused it. */
  readonly ruleId?: string;
}
