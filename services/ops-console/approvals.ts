import { approvePreview, DEFAULT_APPROVAL_TTL_MS } from '../../libs/patterns/preview/approve-preview.js';
import type { AuditRecordEvent } from '../../libs/events/contracts.js';
import type { AuditStore, StoredAuditRecord } from '../../libs/ports/audit-store.js';
import type { Clock } from '../../libs/core/clock.js';
import type { SingleUseStore } from '../../libs/ports/single-use-store.js';
import { deliver, type DeliveryDeps } from '../../libs/reconcile/deliver.js';

/**
 * A preview that waits for a person: a confirm call the preview gate refused as awaiting approval
 * (its audit record). The gate checks the token's signature, principal, tool, arguments hash and
 * resource BEFORE it looks for an approval, so that refusal proves the audited call carries the
 * arguments the token binds: approving `jti` releases exactly that call and nothing else.
 */
export interface PendingApproval {
  /** The preview token's id: what an approval is recorded under. */
  readonly jti: string;
  readonly expiresAtMs: number;
  /** The confirm tool (e.g. create_purchase_order) and the caller that asked. */
  readonly tool: string;
  readonly requester: string;
  readonly tenant: string;
  readonly resourceKey: string | undefined;
  /** The call's arguments after the tool's audit allow-list (the token itself is never audited). */
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly callId: string;
  readonly traceId: string;
  readonly askedAtMs: number;
  /** The refused attempt's audit record, which the decision's own record is chained after. */
  readonly record: StoredAuditRecord;
}

/** The refusal text of `previewRefusalError` for `awaiting-approval` (libs/patterns/preview). */
const AWAITING =
  /a person must approve preview (\S+) before it can be confirmed \(the preview expires at ([^)]+)\)/;

/** The preview id and expiry an attempt's record names when the gate refused it as awaiting approval. */
export function awaitingApprovalOf(
  stored: StoredAuditRecord,
): { jti: string; expiresAtMs: number } | undefined {
  if (stored.source !== 'executor' || stored.record.outcome !== 'POLICY_VIOLATION') return undefined;
  for (const d of stored.record.decisions) {
    const m = d.reason === undefined ? null : AWAITING.exec(d.reason);
    if (m === null) continue;
    const expiresAtMs = Date.parse(m[2]!);
    if (Number.isFinite(expiresAtMs)) return { jti: m[1]!, expiresAtMs };
  }
  return undefined;
}

/** The record id of a person's decision on a preview: one per preview, so a repeat is stored once. */
export function decisionRecordId(jti: string): string {
  return `operator:preview:${jti}`;
}

/** What the approvals queue reads and writes. */
export interface ApprovalsDeps {
  readonly audit: AuditStore;
  readonly singleUse: SingleUseStore;
  readonly clock: Clock;
  /** Where a decision's audit record goes: the reconciler's delivery path (audit topic, retried). */
  readonly delivery: DeliveryDeps;
}

/** The result of a decision. */
export type DecisionResult =
  | { readonly ok: true; readonly audited: boolean; readonly detail: string }
  | { readonly ok: false; readonly reason: 'not-found' | 'not-allowed'; readonly detail: string };

/**
 * The approvals queue over the audit log and the single-use store the preview gate redeems tokens
 * in. Listing reads the awaiting-approval refusals of the last hour (an approval outlives no token
 * longer) and leaves out previews that expired, were approved, or that a person already decided.
 */
export class ApprovalsQueue {
  constructor(private readonly deps: ApprovalsDeps) {}

  /** Previews waiting for a person, newest first, optionally of one tenant. */
  async pending(filter: { readonly tenant?: string } = {}): Promise<PendingApproval[]> {
    const now = this.deps.clock.now();
    const fromMs = now - DEFAULT_APPROVAL_TTL_MS;
    const [asked, decided] = await Promise.all([
      this.deps.audit.query({
        outcome: 'POLICY_VIOLATION',
        source: 'executor',
        fromMs,
        order: 'desc',
        limit: 1000,
        ...(filter.tenant === undefined ? {} : { tenant: filter.tenant }),
      }),
      this.deps.audit.query({ source: 'operator', fromMs, order: 'desc', limit: 10_000 }),
    ]);
    const decidedIds = new Set(decided.map((r) => r.recordId));
    const byJti = new Map<string, PendingApproval>();
    for (const stored of asked) {
      const waiting = awaitingApprovalOf(stored);
      if (waiting === undefined || waiting.expiresAtMs <= now || byJti.has(waiting.jti)) continue;
      if (decidedIds.has(decisionRecordId(waiting.jti))) continue;
      byJti.set(waiting.jti, pendingOf(stored, waiting));
    }
    const open: PendingApproval[] = [];
    for (const p of byJti.values()) {
      if ((await this.deps.singleUse.approval(p.jti)) === undefined) open.push(p);
    }
    return open;
  }

  /** One waiting preview by its id, or undefined when it is not (or no longer) waiting. */
  async find(jti: string): Promise<PendingApproval | undefined> {
    return (await this.pending()).find((p) => p.jti === jti);
  }

  /**
   * Approves preview `jti` as `operator:<by>` with `reason`: the approval is recorded in the
   * single-use store (the first one wins, see `approvePreview`), then audited under the operator.
   * Refused when the preview is not waiting, or when the approver is the requester (four eyes).
   */
  async approve(jti: string, by: string, reason: string): Promise<DecisionResult> {
    const pending = await this.find(jti);
    if (pending === undefined) return notWaiting(jti);
    const approver = actorOf(by);
    if (approver === pending.requester || by === pending.requester) {
      return { ok: false, reason: 'not-allowed', detail: 'the requester cannot approve their own preview' };
    }
    const result = await approvePreview(this.deps.singleUse, { jti, approver });
    if (!result.recorded) {
      return {
        ok: false,
        reason: 'not-allowed',
        detail: `preview ${jti} was already approved by ${result.approval.approver}`,
      };
    }
    const audited = await this.audit(pending, approver, 'approved', reason);
    return { ok: true, audited, detail: `preview ${jti} approved; the caller's next confirm runs it once` };
  }

  /**
   * Rejects preview `jti`: its token is marked used (held by the rejection), so no confirm can ever
   * redeem it — not even after a later approval — and the rejection is audited under the operator.
   */
  async reject(jti: string, by: string, reason: string): Promise<DecisionResult> {
    const pending = await this.find(jti);
    if (pending === undefined) return notWaiting(jti);
    const rejecter = actorOf(by);
    const ttlMs = Math.max(1, pending.expiresAtMs - this.deps.clock.now()) + DEFAULT_APPROVAL_TTL_MS;
    const used = await this.deps.singleUse.consume(jti, ttlMs, `rejected-by:${rejecter}`);
    if (used === 'already-used') {
      return { ok: false, reason: 'not-allowed', detail: `preview ${jti} was already used or rejected` };
    }
    const audited = await this.audit(pending, rejecter, 'rejected', reason);
    return { ok: true, audited, detail: `preview ${jti} rejected; its token can no longer be confirmed` };
  }

  private async audit(
    p: PendingApproval,
    actor: string,
    verdict: 'approved' | 'rejected',
    reason: string,
  ): Promise<boolean> {
    const event = decisionAuditEvent(p, actor, verdict, reason, this.deps.clock.now());
    const report = await deliver(this.deps.delivery, { audit: event }, AbortSignal.timeout(30_000));
    return report.audited;
  }
}

/**
 * The audit record of a person's decision on a preview, in the chain of the call it decides on
 * (same tenant, callId, resource key and trace). Its principal is the operator, its source
 * `operator`; the outcome stays the call's (POLICY_VIOLATION: nothing ran yet), and the decision
 * (`pass` for approved, `refuse` for rejected) carries the preview, the reason and the requester. Pure.
 */
export function decisionAuditEvent(
  p: PendingApproval,
  actor: string,
  verdict: 'approved' | 'rejected',
  reason: string,
  nowMs: number,
): AuditRecordEvent {
  const r = p.record.record;
  return {
    recordId: decisionRecordId(p.jti),
    callId: r.callId,
    tool: r.tool,
    toolVersion: r.toolVersion ?? null,
    principalId: actor,
    tenant: r.tenant,
    taskId: r.taskId,
    step: r.step,
    index: r.index,
    traceId: r.traceId,
    idempotencyKey: r.idempotencyKey ?? null,
    resourceKey: r.resourceKey ?? null,
    argumentsJson: JSON.stringify(r.arguments),
    resultJson: null,
    outcome: 'POLICY_VIOLATION',
    errorCode: null,
    decisions: [
      {
        stage: 'business-rules',
        decision: verdict === 'approved' ? 'pass' : 'refuse',
        reason: `preview ${p.jti} ${verdict} by ${actor}: ${reason} [on behalf of ${p.requester}]`,
        code: null,
        durationMs: 0,
      },
    ],
    attempts: [],
    source: 'operator',
    producerId: actor,
    startedAtMs: Math.floor(nowMs),
    finishedAtMs: Math.floor(nowMs),
  };
}

function pendingOf(
  stored: StoredAuditRecord,
  waiting: { jti: string; expiresAtMs: number },
): PendingApproval {
  const r = stored.record;
  return {
    jti: waiting.jti,
    expiresAtMs: waiting.expiresAtMs,
    tool: r.tool,
    requester: r.principalId,
    tenant: r.tenant,
    resourceKey: r.resourceKey,
    arguments: r.arguments,
    callId: r.callId,
    traceId: r.traceId,
    askedAtMs: stored.recordedAtMs,
    record: stored,
  };
}

function actorOf(by: string): string {
  return by.startsWith('operator:') ? by : `operator:${by}`;
}

function notWaiting(jti: string): DecisionResult {
  return {
    ok: false,
    reason: 'not-found',
    detail: `preview ${jti} is not waiting for approval (unknown, expired, or already decided)`,
  };
}
