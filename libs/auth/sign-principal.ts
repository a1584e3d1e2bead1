import { SignJWT } from 'jose';
import type { CryptoKey, JWK, KeyObject } from 'jose';
import { ToolgateError } from '../core/errors.js';
import type { Principal } from '../core/types.js';
import { claimsOf, PRINCIPAL_TOKEN_TYPE, principalClaimsSchema } from './principal-claims.js';
import type { PrincipalAlgorithm } from './principal-claims.js';
import { DEFAULT_PRINCIPAL_AUDIENCE, DEFAULT_PRINCIPAL_ISSUER } from './principal-defaults.js';

/** A private key: Ed25519 (EdDSA) or P-256 (ES256). Symmetric secrets are deliberately not accepted. */
export type PrincipalSigningKey = CryptoKey | KeyObject | JWK;

export interface SignPrincipalOptions {
  /**
   * Who vouches for the principal (the agent backend's auth layer), checked by the verifier.
   * Default {@link DEFAULT_PRINCIPAL_ISSUER}, the executor's default `PRINCIPAL_ISSUER`.
   */
  readonly issuer?: string;
  /**
   * Who the assertion is for (the executor), checked by the verifier. Default
   * {@link DEFAULT_PRINCIPAL_AUDIENCE}, the executor's default `PRINCIPAL_AUDIENCE`.
   */
  readonly audience?: string;
  /** Lifetime in seconds; keep it short (the length of one agent task or less). */
  readonly ttlSeconds: number;
  /** Key id placed in the header so verifiers can pick the key during rotation. */
  readonly kid?: string;
  /** Defaults to what the key is: EdDSA for Ed25519, ES256 for P-256. */
  readonly alg?: PrincipalAlgorithm;
  /** Clock in epoch ms; defaults to `Date.now`. */
  readonly now?: () => number;
}

/**
 * Signs `principal` as a compact JWS (a JWT with `typ` {@link PRINCIPAL_TOKEN_TYPE}) that the SDK
 * attaches to every call and the executor verifies with {@link createPrincipalVerifier}.
 *
 * The token is signed, not encrypted: it carries identity, tenant, scopes and roles, never a secret or
 * a credential, so it may travel on Kafka and be logged as an opaque string. It is not a bearer
 * credential for any downstream API.
 *
 * Throws ToolgateError INTERNAL when the principal would not pass verification (empty ids, unknown
 * kind), the ttl is not a positive number of seconds, or the key is neither Ed25519 nor P-256 — the
 * signer refuses to mint a token every verifier would reject.
 */
export async function signPrincipal(
  principal: Principal,
  key: PrincipalSigningKey,
  opts: SignPrincipalOptions,
): Promise<string> {
  const claims = principalClaimsSchema.safeParse(claimsOf(principal));
  if (!claims.success) {
    throw new ToolgateError('INTERNAL', 'Refusing to sign a malformed principal.', { cause: claims.error });
  }
  if (!Number.isFinite(opts.ttlSeconds) || opts.ttlSeconds <= 0) {
    throw new ToolgateError('INTERNAL', 'A principal assertion needs a positive ttlSeconds.');
  }
  const alg = opts.alg ?? algorithmFor(key);
  const nowSec = Math.floor((opts.now ?? Date.now)() / 1000);
  return new SignJWT(claims.data)
    .setProtectedHeader({
      alg,
      typ: PRINCIPAL_TOKEN_TYPE,
      ...(opts.kid === undefined ? {} : { kid: opts.kid }),
    })
    .setIssuer(opts.issuer ?? DEFAULT_PRINCIPAL_ISSUER)
    .setAudience(opts.audience ?? DEFAULT_PRINCIPAL_AUDIENCE)
    .setIssuedAt(nowSec)
    .setExpirationTime(nowSec + Math.ceil(opts.ttlSeconds))
    .sign(key);
}

function algorithmFor(key: PrincipalSigningKey): PrincipalAlgorithm {
  const k = key as {
    algorithm?: { name?: string; namedCurve?: string };
    asymmetricKeyType?: string;
    asymmetricKeyDetails?: { namedCurve?: string };
    kty?: string;
    crv?: string;
  };
  if (
    k.algorithm?.name === 'Ed25519' ||
    k.asymmetricKeyType === 'ed25519' ||
    (k.kty === 'OKP' && k.crv === 'Ed25519')
  ) {
    return 'EdDSA';
  }
  if (
    (k.algorithm?.name === 'ECDSA' && k.algorithm.namedCurve === 'P-256') ||
    (k.asymmetricKeyType === 'ec' && k.asymmetricKeyDetails?.namedCurve === 'prime256v1') ||
    (k.kty === 'EC' && k.crv === 'P-256')
  ) {
    return 'ES256';
  }
  throw new ToolgateError('INTERNAL', 'A principal signing key must be Ed25519 or P-256.');
}
