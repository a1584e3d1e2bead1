import { createHash } from 'node:crypto';
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
  /**
   * How many verified tokens to remember (by SHA-256 digest), so the calls of one agent turn, which
   * share one token, pay for its signature check once. A remembered token is accepted again only
   * when its times pass at the instant it is judged (the same checks, as of `atMs`); anything else
   * goes through the full check, which gives the refusal. The keys of a verifier never change, so
   * a key rotation, which builds a new verifier, starts with an empty memory. Least recently used
   * tokens are forgotten first; 0 remembers none. Default 10,000 (a few MB).
   */
  readonly rememberedTokens?: number;
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
  const toleranceSec = opts.clockToleranceSec ?? 5;
  const remembered = new RememberedTokens(opts.rememberedTokens ?? 10_000);
  return {
    async verify(token: string, options: PrincipalVerifyOptions = {}): Promise<Principal> {
      if (typeof token !== 'string' || token.length === 0)
        throw invalid('missing', 'is missing or malformed');
      if (token.length > MAX_TOKEN_LENGTH) throw invalid('malformed', 'is missing or malformed');
      const nowMs = options.atMs ?? now();
      if (!Number.isFinite(nowMs)) throw invalid('other', 'cannot be judged without a valid time');
      const digest = remembered.enabled ? createHash('sha256').update(token).digest('base64') : '';
      const known = remembered.get(digest);
      if (known !== undefined && timesPass(known.times, nowMs, toleranceSec, opts.maxTokenAgeSec)) {
        return known.principal;
      }
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
      const principal = principalOf(claims.data);
      // requiredClaims made exp and iat present numbers; jose checked nbf's type when present.
      remembered.set(digest, {
        principal,
        times: {
          iat: payload.iat,
          exp: payload.exp!,
          ...(payload.nbf === undefined ? {} : { nbf: payload.nbf }),
        },
      });
      return principal;
    },
  };
}

/** The time claims of a verified token, in epoch seconds. */
interface TokenTimes {
  readonly iat: number;
  readonly exp: number;
  readonly nbf?: number;
}

/**
 * Whether a token that passed every check before passes its time checks at `nowMs`: the checks
 * `verify` makes (jose's, as it computes them: whole seconds, `clockTolerance` either way, and
 * ours for an issue time in the future). False sends the token through the full check.
 */
function timesPass(times: TokenTimes, nowMs: number, toleranceSec: number, maxTokenAgeSec?: number): boolean {
  const nowSec = Math.floor(nowMs / 1000);
  if (times.exp <= nowSec - toleranceSec) return false;
  if (times.nbf !== undefined && times.nbf > nowSec + toleranceSec) return false;
  if (times.iat > nowMs / 1000 + toleranceSec || times.iat > nowSec + toleranceSec) return false;
  if (maxTokenAgeSec !== undefined && nowSec - times.iat - toleranceSec > maxTokenAgeSec) return false;
  return true;
}

/** Verified tokens by digest, least recently used forgotten first. */
class RememberedTokens {
  readonly #byDigest = new Map<string, { readonly principal: Principal; readonly times: TokenTimes }>();

  constructor(private readonly capacity: number) {}

  get enabled(): boolean {
    return this.capacity > 0;
  }

  get(digest: string): { readonly principal: Principal; readonly times: TokenTimes } | undefined {
    const entry = this.#byDigest.get(digest);
    if (entry !== undefined) {
      this.#byDigest.delete(digest);
      this.#byDigest.set(digest, entry);
    }
    return entry;
  }

  set(digest: string, entry: { readonly principal: Principal; readonly times: TokenTimes }): void {
    if (!this.enabled) return;
    this.#byDigest.delete(digest);
    this.#byDigest.set(digest, entry);
    if (this.#byDigest.size > this.capacity) this.#byDigest.delete(this.#byDigest.keys().next().value!);
  }
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
