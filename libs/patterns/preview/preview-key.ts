import type { CryptoKey, KeyObject } from 'jose';

/** Fewer bytes than this are refused as an HMAC secret (RFC 7518 §3.2: at least the hash size). */
export const MIN_HMAC_SECRET_BYTES = 32;

/**
 * The server key that signs and checks preview tokens. Held only by the executors: a preview token
 * is minted and redeemed by toolgate itself, never by the agent backend or the model.
 *
 * - `HS256`: one shared secret (at least {@link MIN_HMAC_SECRET_BYTES} random bytes), simplest when
 *   every executor can hold it.
 * - `EdDSA`: an Ed25519 pair; the public half is enough for a process that only checks tokens.
 */
export type PreviewKey =
  | { readonly alg: 'HS256'; readonly secret: Uint8Array }
  | {
      readonly alg: 'EdDSA';
      readonly privateKey?: CryptoKey | KeyObject;
      readonly publicKey: CryptoKey | KeyObject;
    };

/** The key material that signs; throws TypeError when `key` cannot sign (a public-only Ed25519 key). */
export function signingMaterial(key: PreviewKey): CryptoKey | KeyObject | Uint8Array {
  if (key.alg === 'HS256') return checkedSecret(key.secret);
  if (key.privateKey === undefined)
    throw new TypeError('this preview key has no private half: it cannot sign');
  return key.privateKey;
}

/** The key material that verifies. */
export function verifyingMaterial(key: PreviewKey): CryptoKey | KeyObject | Uint8Array {
  return key.alg === 'HS256' ? checkedSecret(key.secret) : key.publicKey;
}

function checkedSecret(secret: Uint8Array): Uint8Array {
  if (!(secret instanceof Uint8Array) || secret.byteLength < MIN_HMAC_SECRET_BYTES) {
    throw new TypeError(`a preview HMAC secret needs at least ${MIN_HMAC_SECRET_BYTES} bytes`);
  }
  return secret;
}

/**
 * An HS256 preview key from configuration: `secret` is base64 or base64url text (e.g. the output of
 * `openssl rand -base64 32`) decoding to at least {@link MIN_HMAC_SECRET_BYTES} bytes. Every executor
 * of a deployment must be given the same secret, or a token previewed on one is refused on another.
 * Throws TypeError for text that is not base64 or decodes too short; the message never echoes it.
 */
export function hmacPreviewKey(secret: string): PreviewKey {
  const text = secret.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) throw new TypeError('the preview secret is not base64 text');
  const bytes = Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return { alg: 'HS256', secret: checkedSecret(new Uint8Array(bytes)) };
}
