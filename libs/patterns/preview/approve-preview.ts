import type { Approval, SingleUseStore } from '../../ports/single-use-store.js';

/** Default retention of an approval: longer than any preview token lives. */
export const DEFAULT_APPROVAL_TTL_MS = 3_600_000;

/** An operator's approval of one preview. */
export interface ApprovePreviewRequest {
  /** The preview's token id, as the awaiting-approval refusal and the preview's answer name it. */
  readonly jti: string;
  /** The person approving (e.g. `manager:M-1`), as the ops tool authenticated them. */
  readonly approver: string;
}

/** What the approval call did. */
export interface ApprovePreviewResult {
  /** The approval in force (this one, or an earlier one that wins). */
  readonly approval: Approval;
  /** False when someone had already approved this preview; their approval stands. */
  readonly recorded: boolean;
}

/**
 * The ops operation behind "approve preview <jti>" (the CLI wraps it): records that `approver`
 * approved the preview token `jti`, after which a confirm carrying that token can pass the approval
 * step of `PreviewGate.confirm`. The first approval wins and approving is idempotent. An approval by
 * the requester themself is recorded but does not count (the confirm is refused as self-approved).
 *
 * The caller authenticates and authorizes the approver; this function trusts it. It does not check
 * that the token exists or is still valid (tokens are not stored); approving an expired or unknown
 * id has no effect on anything. Throws RangeError for an empty jti or approver, and what the store
 * throws when it is unreachable.
 */
export async function approvePreview(
  store: SingleUseStore,
  request: ApprovePreviewRequest,
  options: { readonly ttlMs?: number } = {},
): Promise<ApprovePreviewResult> {
  const approval = await store.approve(
    request.jti,
    request.approver,
    options.ttlMs ?? DEFAULT_APPROVAL_TTL_MS,
  );
  return { approval, recorded: approval.approver === request.approver };
}
