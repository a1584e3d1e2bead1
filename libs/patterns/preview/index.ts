/** Preview/confirm: signed, single-use, time-boxed preview tokens with an optional approval step. */
export {
  PREVIEW_TOKEN_TYPE,
  DEFAULT_PREVIEW_TTL_MS,
  argumentsHash,
  type PreviewBinding,
  type PreviewClaims,
} from './preview-claims.js';
export { MIN_HMAC_SECRET_BYTES, hmacPreviewKey, type PreviewKey } from './preview-key.js';
export { issuePreviewToken, type IssueOptions, type IssuedPreviewToken } from './issue-preview-token.js';
export {
  verifyPreviewToken,
  peekPreviewClaims,
  type ExpectedPreview,
  type PreviewVerification,
} from './verify-preview-token.js';
export type { PreviewRefusal, PreviewRefusalReason } from './preview-refusal.js';
export { previewRefusalError, type RefusalWording } from './preview-refusal-error.js';
export {
  PreviewGate,
  type PreviewGateOptions,
  type PreviewRequest,
  type ConfirmRequest,
  type CurrentState,
  type Confirmation,
  DEFAULT_APPROVAL_RULE,
} from './preview-gate.js';
