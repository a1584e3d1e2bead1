import { refusalReasonOf, type PrincipalRefusalReason } from '../../libs/auth/principal-refusal.js';
import type { PrincipalVerifier } from '../../libs/auth/principal-verifier.js';
import { NOT_AUTHORIZED_MESSAGE } from '../../libs/guards/authorize.js';
import { ToolgateError } from '../../libs/core/errors.js';
import type { Principal } from '../../libs/core/types.js';

/** The principal id audit records carry when the assertion could not be verified. */
export const UNVERIFIED_PRINCIPAL = 'unverified';

/** What the model is told when the caller's identity could not be verified: no reason, no hint. */
export const UNVERIFIED_MESSAGE =
  'The identity of the caller could not be verified, so the action was not run.';

export type PrincipalCheck =
  | { readonly ok: true; readonly principal: Principal }
  | {
      readonly ok: false;
      /** What the result carries (outcome UNAUTHORIZED), model-safe and without a hint. */
      readonly error: ToolgateError;
      /** Why, for the audit record only (never the token itself). */
      readonly auditReason: string;
      /**
       * Why, from the closed list of `PRINCIPAL_REFUSAL_REASONS` (`tenant` for a foreign tenant,
       * `other` for a verifier that failed unexpectedly): for the executor's log line and metric.
       */
      readonly refusal: PrincipalRefusalReason;
      /** The principal id the audit record names: the verified id, or {@link UNVERIFIED_PRINCIPAL}. */
      readonly principalId: string;
    };

/**
 * Verifies a request's signed principal assertion and binds it to the request's tenant
 * (authorization facts come only from the verified principal). The assertion's times are judged as
 * of `judgedAtMs` (see `acceptanceTimeMs`): a redelivered call is judged as it was when the broker
 * accepted it, not by how long it waited.
 *
 * - An assertion the verifier refuses (unsigned, forged, expired, foreign issuer or audience, …) —
 *   or a verifier that fails in any other way, which is treated the same (fail closed) — gives
 *   INVALID_PRINCIPAL with a fixed message; the verifier's reason goes to the audit record only.
 * - A verified principal of another tenant than the request claims gives UNAUTHORIZED with the same
 *   message every authorization refusal has: a request cannot borrow another tenant's identity.
 * Never throws.
 */
export async function verifyCallPrincipal(
  verifier: PrincipalVerifier,
  assertion: string,
  tenant: string,
  judgedAtMs?: number,
): Promise<PrincipalCheck> {
  let principal: Principal;
  try {
    principal = await verifier.verify(assertion, judgedAtMs === undefined ? {} : { atMs: judgedAtMs });
  } catch (err) {
    const reason =
      err instanceof ToolgateError && err.code === 'INVALID_PRINCIPAL'
        ? err.message
        : 'The principal assertion could not be verified.';
    return {
      ok: false,
      error: new ToolgateError('INVALID_PRINCIPAL', UNVERIFIED_MESSAGE, { retryable: false }),
      auditReason: reason,
      refusal: refusalReasonOf(err),
      principalId: UNVERIFIED_PRINCIPAL,
    };
  }
  if (principal.tenant !== tenant) {
    return {
      ok: false,
      error: new ToolgateError('UNAUTHORIZED', NOT_AUTHORIZED_MESSAGE, { retryable: false }),
      auditReason: "The verified principal belongs to another tenant than the request's.",
      refusal: 'tenant',
      principalId: principal.id,
    };
  }
  return { ok: true, principal };
}
