import { z } from 'zod';
import { argumentsFingerprint } from '../core/idempotency-key.js';
import type { ReconciliationCase } from '../ports/case-store.js';

/**
 * The original request of a case, as the executor keeps it in a dead letter (`requestJson`: the
 * request minus its signed principal assertion, with the arguments — when they were a JSON object —
 * reduced to the tool's audit allow-list). Everything needed to answer its requester and to find the
 * original call on the calls topic, whose full arguments a status check or a re-submission needs.
 */
export interface CaseRequest {
  readonly callId: string;
  readonly providerCallId: string;
  readonly tool: string;
  readonly toolVersion: string | null;
  readonly tenant: string;
  readonly taskId: string;
  readonly step: number;
  readonly index: number;
  readonly idempotencyKey: string;
  readonly resourceKey: string;
  /** The verified principal's id; null when the request was never verified (poison). */
  readonly principalId: string | null;
  readonly traceId: string;
  readonly replyTopic: string;
  readonly replyPartition: number;
  readonly deadlineMs: number | null;
  readonly requestedAtMs: number;
  /**
   * The call's arguments as the dead letter kept them; undefined when they were not a JSON object.
   * When `argumentsRedacted`, only the tool's audit allow-listed fields are real values (the rest is
   * "[redacted]"): the full arguments are on the calls topic only (see original-call.ts). Dead
   * letters written before that carry the full arguments and no flag.
   */
  readonly arguments: Record<string, unknown> | undefined;
  readonly argumentsRedacted: boolean;
  /**
   * SHA-256 of the call's canonical arguments, as its idempotency record holds it: given by the dead
   * letter, else computed from full arguments; undefined when neither is known.
   */
  readonly argumentsFingerprint: string | undefined;
}

const text = z.string().min(1);
const RequestSchema = z.looseObject({
  callId: text,
  providerCallId: z.string(),
  tool: text,
  toolVersion: z.string().nullable().optional(),
  tenant: text,
  taskId: text,
  step: z.number().int().nonnegative(),
  index: z.number().int().nonnegative(),
  idempotencyKey: z.string(),
  resourceKey: z.string(),
  principalId: z.string().nullable().optional(),
  traceId: z.string(),
  replyTopic: text,
  replyPartition: z.number().int().nonnegative(),
  deadlineMs: z.number().nullable().optional(),
  requestedAtMs: z.number(),
  arguments: z.record(z.string(), z.unknown()).optional(),
  argumentsRedacted: z.boolean().optional(),
  argumentsFingerprint: z.string().min(1).optional(),
});

/**
 * The case's original request, or undefined when the dead letter carried none (an undecodable
 * event) or one without the fields a request must have. Pure.
 */
export function caseRequest(c: Pick<ReconciliationCase, 'context'>): CaseRequest | undefined {
  const parsed = RequestSchema.safeParse(c.context.request);
  if (!parsed.success) return undefined;
  const r = parsed.data;
  return {
    callId: r.callId,
    providerCallId: r.providerCallId,
    tool: r.tool,
    toolVersion: r.toolVersion ?? null,
    tenant: r.tenant,
    taskId: r.taskId,
    step: r.step,
    index: r.index,
    idempotencyKey: r.idempotencyKey,
    resourceKey: r.resourceKey,
    principalId: r.principalId ?? null,
    traceId: r.traceId,
    replyTopic: r.replyTopic,
    replyPartition: r.replyPartition,
    deadlineMs: r.deadlineMs ?? null,
    requestedAtMs: r.requestedAtMs,
    arguments: r.arguments,
    argumentsRedacted: r.argumentsRedacted === true,
    argumentsFingerprint:
      r.argumentsFingerprint ??
      (r.arguments === undefined || r.argumentsRedacted === true
        ? undefined
        : argumentsFingerprint(r.arguments)),
  };
}

/**
 * The tool version the call actually ran against (the executor's last known state), else the version
 * the request pinned, else undefined (the registry's current one). Pure.
 */
export function ranToolVersion(
  c: Pick<ReconciliationCase, 'lastKnownState'>,
  request: CaseRequest,
): string | undefined {
  const known = (c.lastKnownState as { toolVersion?: unknown } | null)?.toolVersion;
  if (typeof known === 'string' && known !== '') return known;
  return request.toolVersion ?? undefined;
}
