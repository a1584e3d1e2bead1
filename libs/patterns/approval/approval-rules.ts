import type {
  ApprovalDraft,
  ApprovalEvent,
  ApprovalRefusal,
  ApprovalRequest,
  ApprovalState,
  ApprovalVote,
} from '../../ports/approval-store.js';

/**
 * The one canonical form of a person's or principal's id for every four-eyes comparison and for what
 * is stored as the approver: surrounding blanks trimmed and the console's `operator:` prefix removed
 * (the console names its people `operator:<sub>` in the audit log; the principals the executor sees
 * carry bare ids). Comparing canonical forms is what makes "the user the agent acts for may not
 * approve" match however the approver's id was spelt. Pure.
 */
export function canonicalActor(id: string): string {
  let bare = id.trim();
  while (bare.startsWith('operator:')) bare = bare.slice('operator:'.length).trim();
  return bare;
}

/** What someone wants to do to a request. */
export type ApprovalAction =
  | { readonly kind: 'approve'; readonly by: string; readonly note: string }
  | { readonly kind: 'reject'; readonly by: string; readonly note: string }
  | { readonly kind: 'redeem'; readonly holder: string };

/** The request's state at `nowMs`: a pending or approved request whose expiry passed is expired. Pure. */
export function stateAt(
  request: Pick<ApprovalRequest, 'state' | 'expiresAtMs'>,
  nowMs: number,
): ApprovalState {
  if ((request.state === 'pending' || request.state === 'approved') && nowMs >= request.expiresAtMs) {
    return 'expired';
  }
  return request.state;
}

/** `request` with its state as of `nowMs` (see {@link stateAt}). Pure. */
export function asOf(request: ApprovalRequest, nowMs: number): ApprovalRequest {
  const state = stateAt(request, nowMs);
  return state === request.state ? request : { ...request, state };
}

/**
 * Four eyes: why `by` may not approve `request`, or undefined when they may. Never the requesting
 * principal, never the user it acts for (the delegation chain the verified principal carries), never
 * the same person twice. Ids are compared in {@link canonicalActor} form. Pure.
 */
export function fourEyesRefusal(
  request: Pick<ApprovalRequest, 'requester' | 'onBehalfOf' | 'approvals'>,
  by: string,
): 'requester' | 'on-behalf-of' | 'already-approved-by-you' | undefined {
  const who = canonicalActor(by);
  if (who === canonicalActor(request.requester)) return 'requester';
  if (request.onBehalfOf !== undefined && who === canonicalActor(request.onBehalfOf)) return 'on-behalf-of';
  if (request.approvals.some((a) => canonicalActor(a.by) === who)) return 'already-approved-by-you';
  return undefined;
}

/** A new pending request from `draft`, created at `nowMs`. Throws RangeError for a draft no gate would record. Pure. */
export function newApprovalRequest(draft: ApprovalDraft, nowMs: number): ApprovalRequest {
  for (const [name, value] of [
    ['id', draft.id],
    ['tenant', draft.tenant],
    ['tool', draft.tool],
    ['requester', draft.requester],
    ['argumentsHash', draft.argumentsHash],
    ['rule', draft.rule.rule],
    ['reason', draft.rule.reason],
  ] as const) {
    if (typeof value !== 'string' || value.trim().length === 0)
      throw new RangeError(`${name} must be non-empty`);
  }
  if (!Number.isInteger(draft.rule.approvers) || draft.rule.approvers < 1 || draft.rule.approvers > 10) {
    throw new RangeError(`approvers must be a whole number from 1 to 10, got ${draft.rule.approvers}`);
  }
  if (!Number.isFinite(draft.expiresAtMs)) throw new RangeError('expiresAtMs must be a finite epoch ms');
  return { ...draft, state: 'pending', version: 1, createdAtMs: Math.floor(nowMs), approvals: [] };
}

/** The first event of a request: its creation by the gate. Pure. */
export function creationEvent(request: ApprovalRequest): ApprovalEvent {
  return {
    id: request.id,
    version: 1,
    from: 'new',
    to: 'pending',
    by: canonicalActor(request.requester),
    note: request.rule.reason,
    atMs: request.createdAtMs,
  };
}

/** The outcome of applying an action: the next request and its event, the same request (a retry), or a refusal. */
export type ApprovalStep =
  | { readonly ok: true; readonly next: ApprovalRequest; readonly event: ApprovalEvent }
  | { readonly ok: true; readonly next: ApprovalRequest; readonly event?: undefined }
  | { readonly ok: false; readonly refusal: ApprovalRefusal };

/**
 * The state machine, one step: `action` applied to `request` at `nowMs`. Pure; the adapters store the
 * result by compare-and-set on `request.version`, so of any number of concurrent actions on one
 * version exactly one is stored and the others are re-judged against what it left.
 *
 * - approve: only while pending and not expired; refused by {@link fourEyesRefusal}; the vote is added
 *   and the request becomes approved once `rule.approvers` distinct people approved.
 * - reject: only while pending and not expired; anyone allowed to decide may reject (a rejection
 *   releases nothing). Final.
 * - redeem: only when approved and not expired; the same holder again is answered with the request
 *   unchanged (a retry of the same logical call); any other holder is refused.
 */
export function approvalTransition(
  request: ApprovalRequest,
  action: ApprovalAction,
  nowMs: number,
): ApprovalStep {
  const state = stateAt(request, nowMs);
  const at = Math.floor(nowMs);
  const move = (patch: Partial<ApprovalRequest>, by: string, note: string): ApprovalStep => {
    const next: ApprovalRequest = { ...request, ...patch, version: request.version + 1 };
    return {
      ok: true,
      next,
      event: {
        id: request.id,
        version: next.version,
        from: request.state,
        to: next.state,
        by,
        note,
        atMs: at,
      },
    };
  };
  switch (action.kind) {
    case 'approve':
    case 'reject': {
      const by = canonicalActor(action.by);
      if (by.length === 0) throw new RangeError('the deciding person must be named');
      if (state === 'expired') return { ok: false, refusal: 'expired' };
      if (state !== 'pending') return { ok: false, refusal: 'not-pending' };
      const vote: ApprovalVote = { by, note: action.note, atMs: at };
      if (action.kind === 'reject') return move({ state: 'rejected', rejection: vote }, by, action.note);
      const refusal = fourEyesRefusal(request, by);
      if (refusal !== undefined) return { ok: false, refusal };
      const approvals = [...request.approvals, vote];
      return move(
        { approvals, state: approvals.length >= request.rule.approvers ? 'approved' : 'pending' },
        by,
        action.note,
      );
    }
    case 'redeem': {
      if (action.holder.length === 0) throw new RangeError('the redeeming call must be named');
      if (state === 'redeemed') {
        return request.redeemedBy === action.holder
          ? { ok: true, next: request }
          : { ok: false, refusal: 'redeemed-by-another-call' };
      }
      if (state === 'expired') return { ok: false, refusal: 'expired' };
      if (state !== 'approved') return { ok: false, refusal: 'not-approved' };
      return move(
        { state: 'redeemed', redeemedBy: action.holder },
        'gate',
        `redeemed by call ${action.holder}`,
      );
    }
  }
}

/** A listing position: after the request created at `createdAtMs` with id `id`. */
export interface ApprovalCursor {
  readonly createdAtMs: number;
  readonly id: string;
}

/** The opaque `next` text of a position. Pure. */
export function encodeApprovalCursor(c: ApprovalCursor): string {
  return Buffer.from(JSON.stringify([c.createdAtMs, c.id]), 'utf8').toString('base64url');
}

/** The position `text` names; throws RangeError for text no listing produced. Pure. */
export function decodeApprovalCursor(text: string): ApprovalCursor {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (Array.isArray(parsed) && Number.isInteger(parsed[0]) && typeof parsed[1] === 'string') {
      return { createdAtMs: parsed[0] as number, id: parsed[1] };
    }
  } catch {
    // falls through to the refusal
  }
  throw new RangeError('not a listing position');
}

/** The page size a listing asks for, 1..500 (default 50); throws RangeError outside. Pure. */
export function pageSizeOf(limit: number | undefined): number {
  const size = limit ?? 50;
  if (!Number.isInteger(size) || size < 1 || size > 500)
    throw new RangeError(`limit must be 1..500, got ${size}`);
  return size;
}
