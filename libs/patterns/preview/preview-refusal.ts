/**
 * Why a preview token was not honoured. Each reason has its own model-readable message (see
 * `previewRefusalError`); none echoes the token.
 */
export type PreviewRefusal =
  /** Not a preview token at all (wrong shape, wrong `typ`, unreadable claims). */
  | { readonly reason: 'malformed' }
  /** The signature does not match the payload under the server key: tampered, or signed elsewhere. */
  | { readonly reason: 'bad-signature' }
  | { readonly reason: 'expired'; readonly expiredAtMs: number }
  /** Issued for another confirm tool. */
  | { readonly reason: 'wrong-tool'; readonly tool: string }
  /** Issued to another principal, tenant, or on behalf of another user. */
  | { readonly reason: 'wrong-principal' }
  /** The confirm's arguments differ from the previewed ones. */
  | { readonly reason: 'arguments-changed' }
  /** The token names another resource than the confirm acts on. */
  | { readonly reason: 'resource-mismatch' }
  /** The resource changed since the preview (its version moved). */
  | {
      readonly reason: 'resource-changed';
      readonly previewedVersion: string;
      readonly currentVersion: string;
    }
  /** The previewed amounts differ from what the confirm would now do. */
  | { readonly reason: 'preview-changed' }
  /** The business rules changed since the preview. */
  | { readonly reason: 'policy-changed'; readonly previewedPolicy: string; readonly currentPolicy: string }
  /** Approval is required and no one has approved this token yet. */
  | { readonly reason: 'awaiting-approval'; readonly jti: string; readonly expiresAtMs: number }
  /** An approval on record is by the requester or the user it acts for (four eyes: never counts). */
  | { readonly reason: 'self-approved'; readonly jti: string }
  /** A person rejected the approval request: the token can never be confirmed. */
  | { readonly reason: 'rejected'; readonly jti: string }
  /** The token was already redeemed by an earlier call; that call is not repeated. */
  | { readonly reason: 'already-used'; readonly jti: string };

export type PreviewRefusalReason = PreviewRefusal['reason'];
