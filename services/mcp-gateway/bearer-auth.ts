import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';

/** How the gateway checks the bearer tokens of MCP clients (it is an OAuth 2.1 resource server). */
export interface BearerAuthOptions {
  /** The authorization server's issuer (`iss` must equal it). */
  readonly issuer: string;
  /**
   * This resource's canonical URL (RFC 8707 resource indicator): `aud` must contain it, so a token
   * minted for another service is refused even when the same authorization server signed it.
   */
  readonly resource: string;
  /** Where the authorization server publishes its keys, or the key set itself (tests, air-gapped). */
  readonly jwks: URL | JWTVerifyGetKey;
  /** Scopes every MCP request needs (e.g. `mcp:tools`); a token without one gets 403 naming them. */
  readonly requiredScopes: readonly string[];
  /** Where the protected-resource metadata (RFC 9728) is served; named in every challenge. */
  readonly metadataUrl: string;
  /** Accepted clock skew in seconds (default 30). */
  readonly clockToleranceSeconds?: number;
}

/** A verified token's claims. The token string itself is not kept. */
export interface VerifiedToken {
  readonly claims: JWTPayload;
  readonly scopes: readonly string[];
}

/** The HTTP refusal of a request whose token is missing, invalid or short of a scope. */
export interface BearerRefusal {
  readonly status: 401 | 403;
  readonly wwwAuthenticate: string;
  /** OAuth error code: `invalid_request`, `invalid_token` or `insufficient_scope`. */
  readonly error: 'invalid_request' | 'invalid_token' | 'insufficient_scope';
  readonly description: string;
}

export type BearerCheck =
  | { readonly ok: true; readonly token: VerifiedToken }
  | {
      readonly ok: false;
      readonly refusal: BearerRefusal;
      /** The verified token of an `insufficient_scope` refusal: who was refused (for the audit). */
      readonly token?: VerifiedToken;
    };

/** The scopes of a token: the space-separated `scope` claim (RFC 8693/9068) or an `scp` array. */
export function tokenScopes(claims: JWTPayload): string[] {
  const scope = claims.scope;
  if (typeof scope === 'string') return scope.split(' ').filter((s) => s !== '');
  const scp = claims.scp;
  if (Array.isArray(scp)) return scp.filter((s): s is string => typeof s === 'string');
  return [];
}

/**
 * Builds the bearer check. Contract of the returned function, given the `Authorization` header:
 * - missing, or not `Bearer <token>` → 401 `invalid_request`, challenge without an error code
 *   detail beyond that (RFC 6750 §3.1);
 * - signature, issuer, audience (must contain {@link BearerAuthOptions.resource}), expiry or
 *   not-before wrong → 401 `invalid_token`;
 * - valid, but without every required scope → 403 `insufficient_scope` with `scope="<required>"`
 *   (the refusal carries the verified claims: the caller is known, only not allowed);
 * Every challenge names `resource_metadata`, so a client can discover the authorization server.
 * The description never echoes the token. Never throws for a bad token; an unreachable JWKS is
 * reported as `invalid_token` too (the client may retry; the request is not served).
 */
export function createBearerCheck(
  options: BearerAuthOptions,
): (authorization: string | undefined) => Promise<BearerCheck> {
  const keys = options.jwks instanceof URL ? createRemoteJWKSet(options.jwks) : options.jwks;
  const challenge = (params: Record<string, string>): string =>
    `Bearer ${Object.entries({ ...params, resource_metadata: options.metadataUrl })
      .map(([k, v]) => `${k}="${v.replace(/["\\]/g, '')}"`)
      .join(', ')}`;
  const refuse = (
    status: 401 | 403,
    error: BearerRefusal['error'],
    description: string,
    extra: Record<string, string> = {},
    token?: VerifiedToken,
  ): BearerCheck => ({
    ok: false,
    refusal: {
      status,
      error,
      description,
      wwwAuthenticate: challenge({ error, error_description: description, ...extra }),
    },
    ...(token === undefined ? {} : { token }),
  });

  return async (authorization) => {
    const match = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/.exec(authorization?.trim() ?? '');
    if (match === null) {
      return refuse(401, 'invalid_request', 'A bearer access token is required.', {
        scope: options.requiredScopes.join(' '),
      });
    }
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(match[1]!, keys, {
        issuer: options.issuer,
        audience: options.resource,
        clockTolerance: options.clockToleranceSeconds ?? 30,
        requiredClaims: ['exp', 'sub'],
      }));
    } catch (err) {
      return refuse(401, 'invalid_token', describeTokenError(err));
    }
    const scopes = tokenScopes(claims);
    const missing = options.requiredScopes.filter((s) => !scopes.includes(s));
    if (missing.length > 0) {
      return refuse(
        403,
        'insufficient_scope',
        `The token lacks the scope ${missing.join(' ')}.`,
        { scope: options.requiredScopes.join(' ') },
        { claims, scopes },
      );
    }
    return { ok: true, token: { claims, scopes } };
  };
}

function describeTokenError(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'The access token has expired.';
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'aud') return 'The access token was not issued for this resource.';
    if (err.claim === 'iss') return 'The access token comes from an issuer this resource does not trust.';
    return `The access token's ${err.claim} claim is not acceptable.`;
  }
  if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWSSignatureVerificationFailed) {
    return 'The access token signature does not verify.';
  }
  return 'The access token is not valid.';
}
