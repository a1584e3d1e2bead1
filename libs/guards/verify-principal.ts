import { refusalReasonOf } from '../auth/principal-refusal.js';
import type { PrincipalVerifier } from '../auth/principal-verifier.js';
import { ToolgateError } from '../core/errors.js';
import type { Principal } from '../core/types.js';
import type { CallState, PrincipalRefusal } from '../pipeline/call-state.js';
import type { PipelineDeps } from '../pipeline/deps.js';
import type { StageResult } from '../pipeline/stage.js';
import { CONTINUE } from '../pipeline/stage.js';
import { NOT_AUTHORIZED_MESSAGE } from './authorize.js';
import { priorClaim } from './prior-claim.js';

/** What the model is told when the caller's identity could not be verified: no reason, no hint. */
export const UNVERIFIED_MESSAGE =
  'The identity of the caller could not be verified, so the action was not run.';

/**
 * The first ingress stage of a signed run (`RunOptions.signed`): verifies the call's signed
 * principal assertion with `deps.verifier`, as of `signed.judgedAtMs`, and binds it to the call's
 * tenant; on success `state.ctx.principal` becomes the verified principal, the only source of
 * authorization facts for every later stage.
 *
 * A refusal is UNAUTHORIZED (a foreign tenant) or INVALID_PRINCIPAL (anything the verifier refused,
 * or a verifier that failed or is missing: fail closed), with a fixed model-facing message; the
 * verifier's reason goes to the audit decision and to `state.principalRefusal`, never the token.
 * One exception keeps "never answer 'not run' for an effect that may exist": when the call's
 * idempotency key already has a record of this call (see `priorClaim`), the call finishes
 * UNRESOLVED instead. No side effects (the store is only peeked at).
 */
export async function verifyPrincipalStage(state: CallState, deps: PipelineDeps): Promise<StageResult> {
  const { signed } = state;
  if (signed === undefined) return CONTINUE;
  const checked = await verifyCallPrincipal(
    deps.verifier,
    signed.principalAssertion,
    state.ctx.tenant,
    signed.judgedAtMs,
  );
  if (checked.ok) {
    state.ctx = { ...state.ctx, principal: checked.principal };
    return CONTINUE;
  }
  state.principalRefusal = checked.refusal;
  if (checked.principal !== undefined) state.ctx = { ...state.ctx, principal: checked.principal };
  const prior = await priorClaim(deps, state, signed.argumentsJson);
  if (prior.kind === 'may-have-run') {
    return {
      kind: 'finish',
      outcome: 'UNRESOLVED',
      error: prior.error,
      reason: `${checked.refusal.detail} ${prior.reason}`,
    };
  }
  return { kind: 'refuse', error: checked.error, reason: checked.refusal.detail };
}

/** What {@link verifyCallPrincipal} found. */
export type PrincipalCheck =
  | { readonly ok: true; readonly principal: Principal }
  | {
      readonly ok: false;
      /** What the result carries, model-safe and without a hint. */
      readonly error: ToolgateError;
      readonly refusal: PrincipalRefusal;
      /** The verified principal, when it was verified but belongs to another tenant. */
      readonly principal?: Principal;
    };

/**
 * Verifies a signed principal assertion and binds it to `tenant`, judging its times as of
 * `judgedAtMs`: a verifier refusal — or a verifier that fails in any other way, or none — is
 * INVALID_PRINCIPAL; a verified principal of another tenant is UNAUTHORIZED with the message every
 * authorization refusal has (a request cannot borrow another tenant's identity). Never throws.
 */
export async function verifyCallPrincipal(
  verifier: PrincipalVerifier | undefined,
  assertion: string,
  tenant: string,
  judgedAtMs?: number,
): Promise<PrincipalCheck> {
  let principal: Principal;
  try {
    if (verifier === undefined) throw new Error('no principal verifier is configured');
    principal = await verifier.verify(assertion, judgedAtMs === undefined ? {} : { atMs: judgedAtMs });
  } catch (err) {
    const detail =
      err instanceof ToolgateError && err.code === 'INVALID_PRINCIPAL'
        ? err.message
        : 'The principal assertion could not be verified.';
    return {
      ok: false,
      error: new ToolgateError('INVALID_PRINCIPAL', UNVERIFIED_MESSAGE, { retryable: false }),
      refusal: { reason: refusalReasonOf(err), detail },
    };
  }
  if (principal.tenant !== tenant) {
    return {
      ok: false,
      error: new ToolgateError('UNAUTHORIZED', NOT_AUTHORIZED_MESSAGE, { retryable: false }),
      refusal: {
        reason: 'tenant',
        detail: "The verified principal belongs to another tenant than the request's.",
      },
      principal,
    };
  }
  return { ok: true, principal };
}
