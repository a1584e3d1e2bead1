import { ToolgateError } from '../core/errors.js';

/**
 * Why a principal assertion was refused: a closed list, so it can label a metric
 * (`toolgate_principal_refusals_total{reason}`) and be matched by alerts. Anything not named here
 * is `other`. Adding a reason is a contract change for dashboards and alerts.
 *
 * - `missing`: no assertion at all (an empty string).
 * - `malformed`: not a compact JWS, or too long to be one.
 * - `algorithm`: unsigned (`alg: none`), symmetric or otherwise unaccepted algorithm.
 * - `signature`: the signature does not match (tampered with, or signed by another key of that kid).
 * - `unknown_key`: no trusted key for its kid (or no kid while several keys are trusted).
 * - `type`: a JWT that is not a principal assertion (another `typ`).
 * - `issuer` / `audience`: issued by someone else, or meant for someone else.
 * - `expired`: past its `exp`; `too_old`: older than the verifier's maximum age.
 * - `not_yet_valid`: before its `nbf`; `issued_in_future`: an `iat` ahead of the clock.
 * - `claims`: signed and current, but the principal claims themselves are malformed.
 * - `tenant`: a valid principal of another tenant than the request claims.
 * - `other`: anything else (a verifier that failed in an unexpected way).
 */
export const PRINCIPAL_REFUSAL_REASONS = [
  'missing',
  'malformed',
  'algorithm',
  'signature',
  'unknown_key',
  'type',
  'issuer',
  'audience',
  'expired',
  'too_old',
  'not_yet_valid',
  'issued_in_future',
  'claims',
  'tenant',
  'other',
] as const;

export type PrincipalRefusalReason = (typeof PRINCIPAL_REFUSAL_REASONS)[number];

const KNOWN: ReadonlySet<string> = new Set(PRINCIPAL_REFUSAL_REASONS);

/** `value` when it is one of {@link PRINCIPAL_REFUSAL_REASONS}, else `other`. Total; never throws. */
export function principalRefusalReason(value: unknown): PrincipalRefusalReason {
  return typeof value === 'string' && KNOWN.has(value) ? (value as PrincipalRefusalReason) : 'other';
}

/**
 * The INVALID_PRINCIPAL error a principal verifier throws: a ToolgateError whose `message` is safe to
 * show (it never echoes the token) and whose `reason` says, from a closed list, why.
 */
export class PrincipalRefusedError extends ToolgateError {
  readonly reason: PrincipalRefusalReason;

  constructor(reason: PrincipalRefusalReason, message: string, options: { readonly cause?: unknown } = {}) {
    super('INVALID_PRINCIPAL', message, { cause: options.cause });
    this.name = 'PrincipalRefusedError';
    this.reason = reason;
  }
}

/**
 * The refusal reason of an error a verifier threw: its `reason` for a {@link PrincipalRefusedError},
 * `other` for anything else (a verifier that is not toolgate's, or a defect). Never throws.
 */
export function refusalReasonOf(err: unknown): PrincipalRefusalReason {
  return err instanceof PrincipalRefusedError ? principalRefusalReason(err.reason) : 'other';
}
