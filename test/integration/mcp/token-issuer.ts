import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createLocalJWKSet, SignJWT, type JSONWebKeySet, type JWK, type JWTVerifyGetKey } from 'jose';

/** A stand-in OAuth authorization server: one ES256 key, its JWKS, and tokens on demand. */
export interface TokenIssuer {
  readonly issuer: string;
  readonly jwks: JWTVerifyGetKey;
  /** The same public key as a JWKS document, for a gateway that fetches it over HTTP. */
  readonly publicJwks: JSONWebKeySet;
  /** A signed access token; `claims` override the defaults (aud = the resource, exp = +5 min). */
  token(claims: TokenClaims, options?: { readonly signWithStrangerKey?: boolean }): Promise<string>;
}

export interface TokenClaims {
  readonly sub: string;
  readonly scope: string;
  readonly tenant?: string;
  readonly aud?: string;
  /** Seconds from now; negative for an expired token. Default 300. */
  readonly expiresIn?: number;
  readonly [claim: string]: unknown;
}

export function createTokenIssuer(resource: string): TokenIssuer {
  const issuer = `https://auth-${randomBytes(4).toString('hex')}.example`;
  const key = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const kid = 'test-as-key';
  const publicJwks: JSONWebKeySet = {
    keys: [{ ...(key.publicKey.export({ format: 'jwk' }) as JWK), kid, alg: 'ES256', use: 'sig' }],
  };
  const jwks = createLocalJWKSet(publicJwks);
  return {
    issuer,
    jwks,
    publicJwks,
    async token({ sub, scope, aud, expiresIn, ...rest }, options = {}) {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ scope, client_id: 'test-mcp-client', ...rest })
        .setProtectedHeader({ alg: 'ES256', kid })
        .setIssuer(issuer)
        .setSubject(sub)
        .setAudience(aud ?? resource)
        .setIssuedAt(now - 10)
        .setExpirationTime(now + (expiresIn ?? 300))
        .setJti(randomBytes(8).toString('hex'))
        .sign(options.signWithStrangerKey === true ? stranger.privateKey : key.privateKey);
    },
  };
}
