import { ToolgateError } from '../../core/errors.js';
import type { PreviewRefusal } from './preview-refusal.js';

/** What the model is told to call to get a fresh token. */
export interface RefusalWording {
  /** The preview tool's name, e.g. `preview_purchase_order`. */
  readonly previewTool: string;
}

/**
 * The model-readable error for a refused preview token. Every refusal is final for that token and
 * applies nothing (its codes are all "definitely not applied", so the idempotency claim is released):
 *
 * - `wrong-principal` → UNAUTHORIZED, with no hint how to pass.
 * - `awaiting-approval` → POLICY_VIOLATION, retryable: the same call succeeds once a person approves;
 *   the message names the token id the approver needs.
 * - `self-approved` → POLICY_VIOLATION, not retryable until someone else approves.
 * - `rejected` → POLICY_VIOLATION, not retryable: a person said no.
 * - everything else → CALLER_ERROR, not retryable (the same call would fail the same way), with a
 *   suggested fix: preview again and confirm with the new token. `expired` says when it expired;
 *   `already-used` says the action is not repeated.
 *
 * Messages never contain the token, hashes, or anything from another principal.
 */
export function previewRefusalError(refusal: PreviewRefusal, wording: RefusalWording): ToolgateError {
  const again = `Call ${wording.previewTool} again, show the user the new preview, and confirm with the new preview_token.`;
  const caller = (message: string, suggestedFix = again): ToolgateError =>
    new ToolgateError('CALLER_ERROR', message, { retryable: false, suggestedFix });
  switch (refusal.reason) {
    case 'malformed':
      return caller(
        'The preview_token is not a valid preview token.',
        `Pass the preview_token exactly as ${wording.previewTool} returned it. ${again}`,
      );
    case 'bad-signature':
      return caller(
        'The preview_token failed its signature check: it was altered or was not issued here.',
        `Pass the preview_token exactly as ${wording.previewTool} returned it. ${again}`,
      );
    case 'expired':
      return caller(
        `The preview_token expired at ${new Date(refusal.expiredAtMs).toISOString()}; previews are valid for a limited time.`,
      );
    case 'wrong-tool':
      return caller(`The preview_token was issued for ${refusal.tool}, not for this tool.`);
    case 'wrong-principal':
      return new ToolgateError('UNAUTHORIZED', 'This preview_token was not issued to you.', {
        retryable: false,
      });
    case 'arguments-changed':
      return caller(
        'The arguments differ from the ones that were previewed; nothing was done.',
        `Confirm with exactly the previewed arguments, or ${again.charAt(0).toLowerCase()}${again.slice(1)}`,
      );
    case 'resource-mismatch':
      return caller('The preview_token was issued for another resource than this call acts on.');
    case 'resource-changed':
      return caller(
        'The resource changed since the preview, so the preview no longer shows what would happen; nothing was done.',
      );
    case 'preview-changed':
      return caller(
        'What this call would do now differs from what was previewed (amounts or lines changed); nothing was done.',
      );
    case 'policy-changed':
      return caller('The business rules changed since the preview; nothing was done.');
    case 'awaiting-approval':
      return new ToolgateError(
        'POLICY_VIOLATION',
        `This action is awaiting approval: a person must approve preview ${refusal.jti} before it can be confirmed (the preview expires at ${new Date(refusal.expiresAtMs).toISOString()}).`,
        {
          retryable: true,
          suggestedFix: `Tell the user the order waits for approval of preview ${refusal.jti}; call this tool again with the same preview_token once it is approved.`,
        },
      );
    case 'self-approved':
      return new ToolgateError(
        'POLICY_VIOLATION',
        `Preview ${refusal.jti} was approved by the requester; it needs the approval of someone else.`,
        { retryable: false, suggestedFix: 'Ask another person (e.g. a manager) to approve the preview.' },
      );
    case 'rejected':
      return new ToolgateError(
        'POLICY_VIOLATION',
        `A person rejected preview ${refusal.jti}; it cannot be confirmed.`,
        {
          retryable: false,
          suggestedFix: `Tell the user the order was not approved. If they still want one, call ${wording.previewTool} again.`,
        },
      );
    case 'already-used':
      return caller(
        `This preview_token was already used by an earlier call (preview ${refusal.jti}); the action is not repeated.`,
        `Do not repeat the action. If the user wants another one, call ${wording.previewTool} again.`,
      );
  }
}
