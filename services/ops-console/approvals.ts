import { operatorAuditEvent } from './operator-audit.js';
import { presentParsedCall, type Presentation } from '../../libs/registry/present-call.js';
import type { AuditRecordEvent } from '../../libs/events/contracts.js';
import type { Clock } from '../../libs/core/clock.js';
import type { TenantScope } from '../../libs/core/tenant-scope.js';
import { inTenantScope } from '../../libs/core/tenant-scope.js';
import { canonicalActor } from '../../libs/patterns/approval/approval-rules.js';
import { redactArguments } from '../../libs/pipeline/build-audit-record.js';
import type { ToolResolver } from '../../libs/pipeline/deps.js';
import type { ToolDefinition } from '../../libs/registry/tool-definition.js';
import type {
  ApprovalChange,
  ApprovalPage,
  ApprovalRefusal,
  ApprovalRequest,
  ApprovalState,
  ApprovalStore,
} from '../../libs/ports/approval-store.js';
import { deliver, type DeliveryDeps } from '../../libs/reconcile/deliver.js';

/** An approval request as the console shows it: the stored request and the arguments a person may see. */
export interface ApprovalView {
  readonly request: ApprovalRequest;
  /** The confirm's arguments after the tool's audit allow-list (unknown tool: every value redacted). */
  readonly arguments: Readonly<Record<string, unknown>>;
  /**
   * The call as the person deciding it sees it: the same rendering an MCP confirmation asks with
   * (`presentParsedCall`: decisive fields first and whole, hidden characters escaped, withheld fields
   * named), or why it cannot be shown in full — then it cannot be approved either.
   */
  readonly shown: Presentation;
}

/** One page of the queue, and how many requests in the operator's scope are in each state. */
export interface ApprovalsListing {
  readonly items: readonly ApprovalView[];
  readonly next?: string;
  readonly counts: Readonly<Record<ApprovalState, number>>;
}

/** What the approvals queue reads and writes. */
export interface ApprovalsDeps {
  readonly approvals: ApprovalStore;
  /** The executors' tool catalog: which arguments of a call a person may see. */
  readonly tools: ToolResolver;
  readonly clock: Clock;
  /** Where a decision's audit record goes: the reconciler's delivery path (audit topic, retried). */
  readonly delivery: DeliveryDeps;
}

/** The result of a decision. */
export type DecisionResult =
  | { readonly ok: true; readonly audited: boolean; readonly detail: string }
  | { readonly ok: false; readonly reason: 'not-found' | 'not-allowed'; readonly detail: string };

/**
 * The console's approvals queue over the approval store: the requests the preview gate recorded
 * itself, so nothing a model writes into a message can add, hide or alter an entry. Every method
 * takes the operator's `TenantScope`; a request outside it is answered exactly like an unknown one.
 * Deciding goes through the store's state machine (four eyes, distinct approvers, compare-and-set)
 * and is audited under the operator.
 */
export class ApprovalsQueue {
  constructor(private readonly deps: ApprovalsDeps) {}

  /** A page of requests in `scope` (default: the pending ones), oldest first, with per-state counts. */
  async list(
    scope: TenantScope,
    options: { readonly state?: ApprovalState; readonly after?: string; readonly limit?: number } = {},
  ): Promise<ApprovalsListing> {
    const [page, counts]: [ApprovalPage, Readonly<Record<ApprovalState, number>>] = await Promise.all([
      this.deps.approvals.list({
        scope,
        state: options.state ?? 'pending',
        ...(options.after === undefined ? {} : { after: options.after }),
        limit: options.limit ?? 50,
      }),
      this.deps.approvals.counts(scope),
    ]);
    return {
      items: page.items.map((r) => this.#view(r)),
      ...(page.next === undefined ? {} : { next: page.next }),
      counts,
    };
  }

  /** One request in `scope`, or undefined when there is none (or it is outside the scope). */
  async find(scope: TenantScope, id: string): Promise<ApprovalView | undefined> {
    if (id.length === 0 || id.length > 512) return undefined;
    const request = await this.deps.approvals.get(id);
    return request === undefined || !inTenantScope(scope, request.tenant) ? undefined : this.#view(request);
  }

  /**
   * The request `id` when it exists but lies outside `scope` — what the console audits as an attempt
   * across tenants; undefined for an unknown id or one inside the scope.
   */
  async outsideScope(scope: TenantScope, id: string): Promise<ApprovalRequest | undefined> {
    if (id.length === 0 || id.length > 512) return undefined;
    const request = await this.deps.approvals.get(id);
    return request === undefined || inTenantScope(scope, request.tenant) ? undefined : request;
  }

  /** The transitions of a request in `scope` (empty outside it). */
  async history(scope: TenantScope, id: string) {
    return (await this.find(scope, id)) === undefined ? [] : this.deps.approvals.events(id);
  }

  /**
   * Approves request `id` as operator `by` (any spelling: stored in canonical form) with `note`.
   * Refused unless pending, and when `by` is the requester, the user it acts for, or already approved it.
   */
  approve(scope: TenantScope, id: string, by: string, note: string): Promise<DecisionResult> {
    return this.#decide(scope, id, by, note, 'approved');
  }

  /** Rejects request `id` for good: no confirm can ever redeem it. */
  reject(scope: TenantScope, id: string, by: string, note: string): Promise<DecisionResult> {
    return this.#decide(scope, id, by, note, 'rejected');
  }

  async #decide(
    scope: TenantScope,
    id: string,
    by: string,
    note: string,
    verdict: 'approved' | 'rejected',
  ): Promise<DecisionResult> {
    const view = await this.find(scope, id);
    if (view === undefined) return notFound(id);
    if (verdict === 'approved' && !view.shown.ok) {
      return {
        ok: false,
        reason: 'not-allowed',
        detail: `request ${id} cannot be approved: ${view.shown.reason}`,
      };
    }
    const actor = canonicalActor(by);
    const change: ApprovalChange =
      verdict === 'approved'
        ? await this.deps.approvals.approve(id, actor, note)
        : await this.deps.approvals.reject(id, actor, note);
    if (!change.ok) {
      return change.refusal === 'unknown'
        ? notFound(id)
        : { ok: false, reason: 'not-allowed', detail: refusalText(change.refusal, id) };
    }
    const r = change.request;
    // A request's arguments never change, so what the view showed is what the record shows.
    const event = decisionAuditEvent(r, view.arguments, actor, verdict, note, this.deps.clock.now());
    const report = await deliver(this.deps.delivery, { audit: event }, AbortSignal.timeout(30_000));
    const detail = standing(r);
    return { ok: true, audited: report.audited, detail };
  }

  #view(request: ApprovalRequest): ApprovalView {
    const tool = requestTool(this.deps.tools, request);
    return {
      request,
      arguments: approvalArguments(tool, request),
      shown: approvalPresentation(tool, request),
    };
  }
}

/** The definition of `request`'s tool in the console's catalog, or undefined when it has none. */
function requestTool(tools: ToolResolver, request: ApprovalRequest): ToolDefinition | undefined {
  const tool = tools.resolve(request.tool, {
    tenant: request.tenant,
    ...(request.toolVersion === '' ? {} : { version: request.toolVersion }),
  });
  return tool.ok ? tool.tool : undefined;
}

/**
 * The arguments of `request` a person may see: its tool's audit allow-list, every other value
 * redacted (all of them when the catalog has no such tool).
 */
export function approvalArguments(
  tool: ToolDefinition | undefined,
  request: ApprovalRequest,
): Record<string, unknown> {
  return redactArguments(request.arguments, tool?.auditFields);
}

/** The longest rendering of a call the console shows; a call needing more cannot be approved. */
export const APPROVAL_PRESENTATION_MAX_CHARS = 20_000;

/**
 * `request`'s call rendered for the person deciding it, by the tool's own definition (decisive
 * fields first and whole); refused when the console does not know the tool — then nobody can see
 * what would run, so nobody may approve it.
 */
export function approvalPresentation(
  tool: ToolDefinition | undefined,
  request: ApprovalRequest,
): Presentation {
  if (tool === undefined) {
    return {
      ok: false,
      reason: `the console does not know tool ${request.tool} ${request.toolVersion}, so it cannot show what would run`,
    };
  }
  return presentParsedCall(tool, request.arguments, { maxChars: APPROVAL_PRESENTATION_MAX_CHARS });
}

/** Where a request stands after a decision, in a sentence for the person who made it. Pure. */
export function standing(r: ApprovalRequest): string {
  switch (r.state) {
    case 'approved':
      return `request ${r.id} approved; the caller's next confirm runs it once`;
    case 'pending':
      return `request ${r.id}: ${r.approvals.length} of ${r.rule.approvers} approvals recorded; ${r.rule.approvers - r.approvals.length} more needed`;
    case 'rejected':
      return `request ${r.id} rejected; it can no longer be confirmed`;
    default:
      return `request ${r.id} is ${r.state}`;
  }
}

/** What a refused decision tells the person. */
export function refusalText(refusal: ApprovalRefusal, id: string): string {
  switch (refusal) {
    case 'requester':
      return 'you asked for this action yourself; someone else must approve it';
    case 'on-behalf-of':
      return 'the action is done on your behalf; someone else must approve it';
    case 'already-approved-by-you':
      return 'you already approved this request; it needs the approval of a different person';
    case 'expired':
      return `request ${id} expired before it was decided`;
    case 'not-pending':
      return `request ${id} is already decided`;
    default:
      return `request ${id} cannot be decided (${refusal})`;
  }
}

/** The record id of a person's decision on a request: one per request, transition and version. */
export function decisionRecordId(request: ApprovalRequest): string {
  return `operator:approval:${request.id}:${request.version}`;
}

/**
 * The audit record of a person's decision, in the chain of the call that asked (same tenant, task,
 * resource and trace when the gate recorded them). Its principal is `operator:<person>`, its source
 * `operator`; the outcome is POLICY_VIOLATION (nothing ran yet) and the decision (`pass` for an
 * approval, `refuse` for a rejection) names the request, the person, their reason, the requester
 * and the user acted for. Pure.
 */
export function decisionAuditEvent(
  r: ApprovalRequest,
  shownArguments: Readonly<Record<string, unknown>>,
  person: string,
  verdict: 'approved' | 'rejected',
  note: string,
  nowMs: number,
): AuditRecordEvent {
  const actor = `operator:${canonicalActor(person)}`;
  const o = r.origin;
  return operatorAuditEvent({
    recordId: decisionRecordId(r),
    call: {
      callId: `approval:${r.id}`,
      tool: r.tool,
      toolVersion: r.toolVersion === '' ? null : r.toolVersion,
      tenant: r.tenant,
      taskId: o?.taskId ?? `approval:${r.id}`,
      step: o?.step ?? 0,
      index: o?.index ?? 0,
      traceId: o?.traceId ?? '0'.repeat(32),
      idempotencyKey: o?.idempotencyKey ?? null,
      resourceKey: o?.resourceKey ?? null,
    },
    actor,
    argumentsJson: JSON.stringify(shownArguments),
    decision: {
      stage: 'business-rules',
      decision: verdict === 'approved' ? 'pass' : 'refuse',
      reason: `approval request ${r.id} ${verdict} by ${actor}: ${note} [requested by ${r.requester}${r.onBehalfOf === undefined ? '' : ` on behalf of ${r.onBehalfOf}`}; ${r.rule.reason}]`,
      outcome: 'POLICY_VIOLATION',
      errorCode: null,
    },
    nowMs,
  });
}

function notFound(id: string): DecisionResult {
  return { ok: false, reason: 'not-found', detail: `there is no approval request ${id}` };
}
