import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { JSONWebKeySet, JWK } from 'jose';

/** The JWS algorithm of the keys {@link generatePrincipalKeys} makes (Ed25519 signatures). */
export const PRINCIPAL_KEY_ALGORITHM = 'EdDSA';

/** A fresh principal-signing key pair, as the two files an operator hands out. */
export interface PrincipalKeyPair {
  /** The key id placed in every assertion's header and on the public JWK. */
  readonly kid: string;
  /**
   * The agent backend's private key, PEM PKCS#8 (`-----BEGIN PRIVATE KEY-----`). Load it with
   * `createPrivateKey(pem)` and pass it as the SDK's `signing.key`. A secret: keep it in the agent
   * backend's secret store only.
   */
  readonly privateKeyPem: string;
  /**
   * The executors' JWKS: the public half only, with `kid`, `alg: EdDSA` and `use: sig`, ready for
   * `PRINCIPAL_JWKS` / `PRINCIPAL_JWKS_FILE`. Not a secret.
   */
  readonly jwks: JSONWebKeySet;
}

/** Whether `kid` is 1-128 of [A-Za-z0-9._-]: safe in JWS headers, file names and log lines. */
export function isPrincipalKeyId(kid: string): boolean {
  return /^[A-Za-z0-9._-]{1,128}$/.test(kid);
}

/**
 * Makes an Ed25519 key pair for signing principal assertions (the SDK) and verifying them (the
 * executors). Throws TypeError when `kid` is not 1-128 of [A-Za-z0-9._-] (it travels in JWS headers
 * and file names).
 */
export function generatePrincipalKeys(kid: string): PrincipalKeyPair {
  if (!isPrincipalKeyId(kid)) throw new TypeError('a key id must be 1-128 of [A-Za-z0-9._-]');
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    kid,
    privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    jwks: { keys: [publicJwkOf(publicKey, kid)] },
  };
}

/**
 * The public JWK of an Ed25519 key (the public half of a private key too), with `kid`,
 * `alg: EdDSA` and `use: sig`: what a verifier's JWKS lists. Never carries the private part.
 * Throws TypeError for a key that is not Ed25519.
 */
export function publicJwkOf(key: KeyObject, kid: string): JWK {
  if (key.asymmetricKeyType !== 'ed25519') throw new TypeError('a principal key must be Ed25519');
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  const { kty, crv, x } = pub.export({ format: 'jwk' });
  return { kty, crv, x, kid, alg: PRINCIPAL_KEY_ALGORITHM, use: 'sig' };
}
