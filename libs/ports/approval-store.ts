import type { TenantScope } from '../core/tenant-scope.js';

/**
 * Where an approval request stands:
 * - `pending`: waits for people (fewer distinct approvals than required so far);
 * - `approved`: enough distinct people approved; the confirming call may redeem it once;
 * - `rejected`: a person refused it; nothing can release it any more;
 * - `expired`: its preview ran out before it was decided or redeemed;
 * - `redeemed`: the confirming call used the approval; it never counts again.
 *
 * Moves: pending → approved | rejected | expired; approved → redeemed | expired. Nothing else.
 */
export type ApprovalState = 'pending' | 'approved' | 'rejected' | 'expired' | 'redeemed';

export const APPROVAL_STATES: readonly ApprovalState[] = [
  'pending',
  'approved',
  'rejected',
  'expired',
  'redeemed',
];

/** Why approval is needed: the rule that asked for it and its reason in words a person reads. */
export interface ApprovalRule {
  /** A stable name of the rule, e.g. `purchase-order-total`. */
  readonly rule: string;
  /** E.g. "orders above $1,000 need a manager's approval; this order totals $9,300.00". */
  readonly reason: string;
  /** How many distinct people must approve (at least 1). */
  readonly approvers: number;
}

/**
 * What the gate that needs an approval records: everything a person must see to decide, taken from
 * the verified preview token and the confirm's own validated arguments, never from message text.
 */
export interface ApprovalDraft {
  /** The preview token's id (`jti`): one request per token. */
  readonly id: string;
  readonly tenant: string;
  /** The confirm tool and its version. */
  readonly tool: string;
  readonly toolVersion: string;
  /** The confirm's validated, normalized arguments (without the token). */
  readonly arguments: Readonly<Record<string, unknown>>;
  /** The token's `argumentsHash` of those arguments: the approval is bound to exactly them. */
  readonly argumentsHash: string;
  /** The verified principal that asked (e.g. an agent id). */
  readonly requester: string;
  /** The user the requester acts for, when it acts for one. */
  readonly onBehalfOf?: string;
  readonly rule: ApprovalRule;
  /** When the request expires (the preview token's expiry), epoch ms. */
  readonly expiresAtMs: number;
  /** The call that asked, for the audit chain of the decision (optional). */
  readonly origin?: ApprovalOrigin;
}

/** The confirming call that first asked, so a decision's audit record joins its chain. */
export interface ApprovalOrigin {
  readonly traceId: string;
  readonly taskId: string;
  readonly step: number;
  readonly index: number;
  readonly idempotencyKey?: string;
  readonly resourceKey?: string;
}

/** One person's approval of a request. */
export interface ApprovalVote {
  /** Canonical person id (see `canonicalActor`). */
  readonly by: string;
  readonly note: string;
  readonly atMs: number;
}

/** A stored request and where it stands. */
export interface ApprovalRequest extends ApprovalDraft {
  readonly state: ApprovalState;
  /** Bumped by every transition; transitions compare-and-set on it. */
  readonly version: number;
  readonly createdAtMs: number;
  /** The distinct approvals so far (in the order given). */
  readonly approvals: readonly ApprovalVote[];
  /** Who rejected it, and why, when rejected. */
  readonly rejection?: ApprovalVote;
  /** The logical call (idempotency key) that redeemed it, when redeemed. */
  readonly redeemedBy?: string;
}

/** One recorded transition of a request. */
export interface ApprovalEvent {
  readonly id: string;
  /** The request's version after the transition. */
  readonly version: number;
  readonly from: ApprovalState | 'new';
  readonly to: ApprovalState;
  /** Canonical id of the person, `gate` for the preview gate, or `clock` for expiry. */
  readonly by: string;
  readonly note: string;
  readonly atMs: number;
}

/** Why a transition was refused. Every refusal leaves the request exactly as it was. */
export type ApprovalRefusal =
  | 'unknown'
  | 'not-pending'
  | 'expired'
  | 'requester'
  | 'on-behalf-of'
  | 'already-approved-by-you'
  | 'not-approved'
  | 'redeemed-by-another-call';

/** What a transition did. */
export type ApprovalChange =
  | { readonly ok: true; readonly request: ApprovalRequest; readonly event?: ApprovalEvent }
  | { readonly ok: false; readonly refusal: ApprovalRefusal; readonly request?: ApprovalRequest };

/** One page of a listing and where the next one starts (absent: this was the last page). */
export interface ApprovalPage {
  readonly items: readonly ApprovalRequest[];
  readonly next?: string;
}

export interface ApprovalListing {
  readonly scope: TenantScope;
  /** Only requests in this state (as of now: a timed-out pending request counts as expired). */
  readonly state?: ApprovalState;
  /** The `next` of the previous page. */
  readonly after?: string;
  /** Page size, 1..500; default 50. */
  readonly limit?: number;
}

/**
 * Durable approval requests: created by the gate that needs the approval, decided by people, redeemed
 * once by the call that asked. Every transition is one compare-and-set (on the request's version) and
 * appends an event naming who made it; the rules (four eyes, distinct approvers, expiry, single
 * redemption) are `approvalTransition` (libs/patterns/approval), the same for every adapter.
 * Throws when the backing store is unreachable; callers fail closed.
 */
export interface ApprovalStore {
  /**
   * Records `draft` as a pending request unless one with its id exists; never alters an existing one.
   * Answers the stored request and whether this call created it.
   */
  create(draft: ApprovalDraft): Promise<{ readonly request: ApprovalRequest; readonly created: boolean }>;
  /** The request `id` as of now (a timed-out pending/approved one reads as `expired`), or undefined. */
  get(id: string): Promise<ApprovalRequest | undefined>;
  /** Adds `by`'s approval (four eyes, distinct approvers); enough of them make the request approved. */
  approve(id: string, by: string, note: string): Promise<ApprovalChange>;
  /** Rejects a pending request for good. */
  reject(id: string, by: string, note: string): Promise<ApprovalChange>;
  /**
   * Moves approved → redeemed for `holder` (the confirming call's idempotency key). The same holder
   * redeeming again is answered ok (a retry of one logical call); any other holder is refused.
   */
  redeem(id: string, holder: string): Promise<ApprovalChange>;
  /** Requests visible in `scope`, oldest first, keyset-paged: no request is ever dropped from a listing. */
  list(listing: ApprovalListing): Promise<ApprovalPage>;
  /** How many requests visible in `scope` are in each state now. */
  counts(scope: TenantScope): Promise<Readonly<Record<ApprovalState, number>>>;
  /** The transitions of `id`, oldest first. */
  events(id: string): Promise<readonly ApprovalEvent[]>;
}
