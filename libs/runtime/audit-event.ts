import { canonicalJson } from '../core/canonical-json.js';
import type { AuditRecordEvent, PolicyContextEvent } from '../events/contracts.js';
import type { AuditRecord, PolicyContext } from '../core/audit-record.js';
import { wholeMs } from './events.js';

/**
 * Most bytes of JSON the audited arguments, and the audited result, may each take in one audit
 * record: keeps every audit event well under the broker's message limit, so an attempt's record is
 * always publishable.
 */
export const MAX_AUDITED_JSON_BYTES = 256 * 1024;

/** The key of the object that stands in for audited values that were left out. */
export const OMITTED_KEY = '[omitted]';

/**
 * The audit-topic event of one attempt (the executor's, by default) or of one MCP request
 * (`source: 'mcp-gateway'`). `recordId` must be unique per attempt (the audit store's idempotency
 * key): a redelivered call is a new attempt and gets a new id, so it is recorded as its own attempt
 * (typically DUPLICATE) instead of being swallowed as a copy of the first. Arguments and result are
 * already reduced to the tool's allow-lists by the pipeline; what the audit store could not hold is
 * left out, saying why (see {@link auditedArgumentsJson}, {@link auditedResultJson}), so the record
 * itself is always accepted. `client` and `policy` are carried when the record has them,
 * `policy` with its absent fields as `null`. Pure.
 */
export function toAuditEvent(
  record: AuditRecord,
  meta: {
    readonly recordId: string;
    readonly producerId: string;
    /** Default `executor`. */
    readonly source?: 'executor' | 'mcp-gateway';
  },
): AuditRecordEvent {
  return {
    recordId: meta.recordId,
    callId: record.callId,
    tool: record.tool,
    toolVersion: record.toolVersion ?? null,
    principalId: record.principalId,
    tenant: record.tenant,
    taskId: record.taskId,
    step: record.step,
    index: record.index,
    traceId: record.traceId,
    idempotencyKey: record.idempotencyKey ?? null,
    resourceKey: record.resourceKey ?? null,
    argumentsJson: auditedArgumentsJson(record.arguments),
    resultJson: record.result === undefined ? null : auditedResultJson(record.result),
    outcome: record.outcome,
    errorCode: record.errorCode ?? null,
    decisions: record.decisions.map((d) => ({
      stage: d.stage,
      decision: d.decision,
      reason: d.reason ?? null,
      code: d.code ?? null,
      durationMs: d.durationMs,
    })),
    attempts: record.attempts.map((a) => ({
      attempt: a.attempt,
      startedAtMs: wholeMs(a.startedAtMs),
      durationMs: a.durationMs,
      result: a.result,
    })),
    source: meta.source ?? 'executor',
    producerId: meta.producerId,
    startedAtMs: wholeMs(record.startedAtMs),
    finishedAtMs: wholeMs(record.finishedAtMs),
    ...(record.client === undefined ? {} : { client: { ...record.client } }),
    ...(record.policy === undefined ? {} : { policy: policyContextEvent(record.policy) }),
  };
}

/** A copy of `policy` with every absent field `null` (the schema's unions with null). */
function policyContextEvent(policy: PolicyContext): PolicyContextEvent {
  const { shadow } = policy;
  return {
    version: policy.version,
    roles: policy.roles === undefined ? null : [...policy.roles],
    facts: policy.facts === undefined ? null : { ...policy.facts },
    ruleId: policy.ruleId ?? null,
    shadow:
      shadow === undefined
        ? null
        : { version: shadow.version, decision: shadow.decision, ruleId: shadow.ruleId ?? null },
  };
}

/**
 * The audited arguments as JSON text the audit store accepts as they are — always a JSON object:
 * - a field whose value the store cannot hold (nesting deeper than the canonical-JSON limit, counted
 *   from the record as the store counts it; a number that is not finite; anything that is not JSON
 *   data) becomes the string `[omitted: <why>]`, and the other fields are kept;
 * - if the object is still above {@link MAX_AUDITED_JSON_BYTES}, it becomes
 *   `{ "[omitted]": "<why>" }`.
 * The reasons name sizes and key paths, never values. Total.
 */
export function auditedArgumentsJson(args: Readonly<Record<string, unknown>>): string {
  // One check for the common case; field by field only when something must be left out.
  if (unstorable({ arguments: args }) === undefined) return withinBudget(JSON.stringify(args));
  const kept: Record<string, unknown> = {};
  for (const key of Object.keys(args)) {
    const problem = unstorable({ arguments: { [key]: args[key] } });
    // defineProperty keeps a model-sent "__proto__" key an ordinary field.
    Object.defineProperty(kept, key, {
      value: problem === undefined ? args[key] : `[omitted: ${problem}]`,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return withinBudget(JSON.stringify(kept));
}

/**
 * The audited result as JSON text the audit store accepts: the result itself, or
 * `{ "[omitted]": "<why>" }` when the store could not hold it or it is above
 * {@link MAX_AUDITED_JSON_BYTES}. Total.
 */
export function auditedResultJson(result: unknown): string {
  const problem = unstorable({ result });
  return problem === undefined ? withinBudget(JSON.stringify(result)) : omitted(problem);
}

/** Why the audit store would refuse `wrapped` (the value at its place in a record), else undefined. */
function unstorable(wrapped: unknown): string | undefined {
  try {
    canonicalJson(wrapped);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : 'not JSON data';
  }
}

function withinBudget(text: string): string {
  const bytes = Buffer.byteLength(text);
  return bytes <= MAX_AUDITED_JSON_BYTES
    ? text
    : omitted(`${bytes} bytes of JSON, above the ${MAX_AUDITED_JSON_BYTES}-byte audit limit`);
}

function omitted(reason: string): string {
  return JSON.stringify({ [OMITTED_KEY]: reason });
}
