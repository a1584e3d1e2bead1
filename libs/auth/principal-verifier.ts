import { createLocalJWKSet, errors, jwtVerify } from 'jose';
import type { CryptoKey, JSONWebKeySet, JWK, JWTPayload, JWTVerifyGetKey, KeyObject } from 'jose';
import type { Principal } from '../core/types.js';
import {
  PRINCIPAL_ALGORITHMS,
  PRINCIPAL_TOKEN_TYPE,
  principalClaimsSchema,
  principalOf,
} from './principal-claims.js';
import { PrincipalRefusedError, type PrincipalRefusalReason } from './principal-refusal.js';

/** A public key accepted for verification. */
export type PrincipalVerificationKey = CryptoKey | KeyObject | JWK;

export interface PrincipalVerifierOptions {
  /**
   * Trusted public keys: a JWKS (`{ keys: [...] }`, each JWK with its `kid`) or a record from kid to
   * key. Private keys are refused at construction: a verifier has no business holding one.
   */
  readonly keys: JSONWebKeySet | Readonly<Record<string, PrincipalVerificationKey>>;
  readonly issuer: string;
  readonly audience: string;
  /** Accepted clock skew for exp/iat, in seconds. Default 5. */
  readonly clockToleranceSec?: number;
  /** Refuse tokens older than this (by `iat`), whatever their `exp`. Default: no extra limit. */
  readonly maxTokenAgeSec?: number;
  /** Clock in epoch ms; defaults to `Date.now`. */
  readonly now?: () => number;
}

/** When a token is judged. */
export interface PrincipalVerifyOptions {
  /**
   * The instant (epoch ms) the token's times are checked against — `exp`, `nbf`, `iat` in the
   * future, and `maxTokenAgeSec` — instead of the verifier's clock. The executor passes the time the
   * broker accepted the call, so a redelivery is judged as it was when it was accepted. Pass only a
   * time nobody who holds the token can choose (a broker's append time, never a producer's), and
   * never one later than now. Default: the verifier's clock.
   */
  readonly atMs?: number;
}

export interface PrincipalVerifier {
  /**
   * The principal carried by `token`, or a {@link PrincipalRefusedError} (a ToolgateError
   * INVALID_PRINCIPAL, not retryable, message safe to show: it never echoes the token; `reason`
   * from the closed list {@link PRINCIPAL_REFUSAL_REASONS}) when the token is unsigned (`alg: none`), signed with a
   * symmetric or unexpected algorithm, tampered with, signed by an unknown key or kid, of another
   * `typ`, from another issuer, for another audience, expired, too old, issued in the future (all
   * three as of `options.atMs`), or carrying malformed principal claims. Never resolves for a token
   * it did not fully check.
   */
  verify(token: string, options?: PrincipalVerifyOptions): Promise<Principal>;
}

/** Longer than any honest assertion; refused before parsing. */
const MAX_TOKEN_LENGTH = 16_384;

/**
 * Builds the executor-side check of signed principal assertions (see `signPrincipal`).
 *
 * The verified principal is the ONLY source of authorization facts: scopes, roles, tenant and
 * on-behalf-of come from here and nowhere else, so nothing a model writes can change a decision — never from tool arguments, event
 * fields outside the token, or anything a model produced. A call whose token fails is refused before
 * any guard that could have side effects.
 */
export function createPrincipalVerifier(opts: PrincipalVerifierOptions): PrincipalVerifier {
  const getKey = keyResolver(opts.keys);
  const now = opts.now ?? Date.now;
  return {
    async verify(token: string, options: PrincipalVerifyOptions = {}): Promise<Principal> {
      if (typeof token !== 'string' || token.length === 0)
        throw invalid('missing', 'is missing or malformed');
      if (token.length > MAX_TOKEN_LENGTH) throw invalid('malformed', 'is missing or malformed');
      const nowMs = options.atMs ?? now();
      if (!Number.isFinite(nowMs)) throw invalid('other', 'cannot be judged without a valid time');
      const toleranceSec = opts.clockToleranceSec ?? 5;
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, getKey, {
          algorithms: [...PRINCIPAL_ALGORITHMS],
          issuer: opts.issuer,
          audience: opts.audience,
          typ: PRINCIPAL_TOKEN_TYPE,
          clockTolerance: toleranceSec,
          requiredClaims: ['iss', 'aud', 'exp', 'iat', 'sub'],
          currentDate: new Date(nowMs),
          ...(opts.maxTokenAgeSec === undefined ? {} : { maxTokenAge: opts.maxTokenAgeSec }),
        }));
      } catch (err) {
        const [reason, text] = refusalFor(err);
        throw invalid(reason, text, err);
      }
      // jose checks iat only against maxTokenAge; a token minted ahead of time is refused here.
      if (payload.iat === undefined || payload.iat > nowMs / 1000 + toleranceSec) {
        throw invalid('issued_in_future', 'has an invalid issue time');
      }
      const claims = principalClaimsSchema.safeParse(payload);
      if (!claims.success) throw invalid('claims', 'carries malformed principal claims', claims.error);
      return principalOf(claims.data);
    },
  };
}

class UnknownKey extends Error {
  override readonly name = 'UnknownKey';
}

function keyResolver(keys: PrincipalVerifierOptions['keys']): JWTVerifyGetKey {
  if (isJwks(keys)) {
    for (const jwk of keys.keys) assertPublic(jwk, jwk.kid ?? '(no kid)');
    return createLocalJWKSet(keys);
  }
  const byKid = new Map(Object.entries(keys));
  if (byKid.size === 0) throw new TypeError('createPrincipalVerifier needs at least one key');
  for (const [kid, key] of byKid) assertPublic(key, kid);
  return (header) => {
    if (header.kid === undefined) {
      // Without a kid the choice is only unambiguous when exactly one key is trusted.
      if (byKid.size === 1) return [...byKid.values()][0]!;
      throw new UnknownKey('no kid and several keys');
    }
    const key = byKid.get(header.kid);
    if (key === undefined) throw new UnknownKey('unknown kid');
    return key;
  };
}

function isJwks(keys: PrincipalVerifierOptions['keys']): keys is JSONWebKeySet {
  return Array.isArray((keys as { keys?: unknown }).keys);
}

function assertPublic(key: PrincipalVerificationKey, kid: string): void {
  const k = key as { type?: unknown; d?: unknown; k?: unknown };
  if (k.type === 'private' || k.type === 'secret' || k.d !== undefined || k.k !== undefined) {
    throw new TypeError(`createPrincipalVerifier: key "${kid}" is not a public key`);
  }
}

type Refusal = readonly [reason: PrincipalRefusalReason, text: string];

/** Why jose refused a token: its closed reason and the sentence the error message ends with. */
function refusalFor(err: unknown): Refusal {
  if (err instanceof UnknownKey || err instanceof errors.JWKSNoMatchingKey)
    return ['unknown_key', 'is signed with an unknown key'];
  if (err instanceof errors.JWKSMultipleMatchingKeys)
    return ['unknown_key', 'does not say which key signed it'];
  // jose reports maxTokenAge as an expiry of the `iat` claim.
  if (err instanceof errors.JWTExpired) {
    return err.claim === 'iat' ? ['too_old', 'is too old'] : ['expired', 'has expired'];
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) return ['signature', 'has an invalid signature'];
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported) {
    return ['algorithm', 'is not signed with an accepted algorithm'];
  }
  if (err instanceof errors.JWTClaimValidationFailed) return claimRefusal(err);
  return ['malformed', 'is missing or malformed'];
}

function claimRefusal(err: errors.JWTClaimValidationFailed): Refusal {
  switch (err.claim) {
    case 'iss':
      return ['issuer', 'comes from an untrusted issuer'];
    case 'aud':
      return ['audience', 'is meant for another audience'];
    case 'typ':
      return ['type', 'is not a principal assertion'];
    case 'nbf':
      return ['not_yet_valid', 'is not valid yet'];
    case 'iat':
      // jose's "iat in the future" (with maxTokenAge); too old is a JWTExpired, handled above.
      return err.reason === 'check_failed'
        ? ['issued_in_future', 'has an invalid issue time']
        : ['claims', 'has an invalid issue time'];
    default:
      // A required registered claim (sub, exp, …) missing or of the wrong type.
      return ['claims', `has an invalid "${err.claim}" claim`];
  }
}

function invalid(reason: PrincipalRefusalReason, text: string, cause?: unknown): PrincipalRefusedError {
  return new PrincipalRefusedError(reason, `The principal assertion ${text}.`, { cause });
}
