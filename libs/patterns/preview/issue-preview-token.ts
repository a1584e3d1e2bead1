import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import {
  DEFAULT_PREVIEW_TTL_MS,
  PREVIEW_TOKEN_TYPE,
  payloadOf,
  previewPayloadSchema,
  type PreviewBinding,
  type PreviewClaims,
} from './preview-claims.js';
import { signingMaterial, type PreviewKey } from './preview-key.js';

/** When and for how long a token is issued. */
export interface IssueOptions {
  /** Current time, epoch ms (from the caller's Clock). */
  readonly nowMs: number;
  /** Lifetime; default {@link DEFAULT_PREVIEW_TTL_MS} (10 minutes). At least one second. */
  readonly ttlMs?: number;
  /** Token id; default a random UUID. Only tests pin it. */
  readonly jti?: string;
}

/** A signed token and the claims it carries (for the preview's answer: id, expiry, approval). */
export interface IssuedPreviewToken {
  readonly token: string;
  readonly claims: PreviewClaims;
}

/**
 * Signs a preview token binding `binding` (principal, tenant, confirm tool, arguments hash, resource
 * key and version, policy version, previewed amounts) for `ttlMs`.
 *
 * The token is a compact JWS (JWT, `typ` {@link PREVIEW_TOKEN_TYPE}) signed with the server key, so
 * the signature covers the whole payload: changing any byte of it, or re-signing with another key,
 * makes {@link verifyPreviewToken} refuse it. It is signed, not encrypted: it carries hashes and
 * ids, no amounts in clear and no secret. Times are whole seconds; the token expires at the last
 * whole second at or before `nowMs + ttlMs`.
 *
 * Issuing has no side effect: the single-use mark is made when the token is redeemed. Throws
 * TypeError for a key that cannot sign, RangeError for a ttl under one second, and a ZodError for a
 * malformed binding (an empty id, a hash that is not SHA-256 hex): a token every verifier would
 * refuse is never minted.
 */
export async function issuePreviewToken(
  binding: PreviewBinding,
  key: PreviewKey,
  options: IssueOptions,
): Promise<IssuedPreviewToken> {
  const ttlMs = options.ttlMs ?? DEFAULT_PREVIEW_TTL_MS;
  if (!Number.isFinite(ttlMs) || ttlMs < 1_000) {
    throw new RangeError(`a preview token lives at least 1000 ms, got ${ttlMs}`);
  }
  const issuedAtMs = Math.floor(options.nowMs / 1000) * 1000;
  const claims: PreviewClaims = {
    ...binding,
    jti: options.jti ?? randomUUID(),
    issuedAtMs,
    expiresAtMs: Math.floor((options.nowMs + ttlMs) / 1000) * 1000,
  };
  const payload = previewPayloadSchema.parse(payloadOf(claims));
  const token = await new SignJWT(payload)
    .setProtectedHeader({ alg: key.alg, typ: PREVIEW_TOKEN_TYPE })
    .sign(signingMaterial(key));
  return { token, claims };
}
