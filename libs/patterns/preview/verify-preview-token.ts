import { base64url, compactVerify, errors } from 'jose';
import {
  PREVIEW_TOKEN_TYPE,
  claimsOf,
  previewPayloadSchema,
  type PreviewBinding,
  type PreviewClaims,
} from './preview-claims.js';
import { verifyingMaterial, type PreviewKey } from './preview-key.js';
import type { PreviewRefusal } from './preview-refusal.js';

/**
 * What the confirm call is about to do, derived from the verified principal and the confirm's own
 * arguments, never from the token. `resourceVersion` and `previewHash` are compared only when given
 * (a caller that must read the resource first compares its version afterwards, see `PreviewGate`).
 */
export type ExpectedPreview = Omit<
  PreviewBinding,
  'resourceVersion' | 'requiresApproval' | 'approvalRule' | 'previewHash'
> & {
  readonly resourceVersion?: string;
  readonly previewHash?: string;
};

/** A verified token's claims, or why it is refused. */
export type PreviewVerification =
  | { readonly ok: true; readonly claims: PreviewClaims }
  | { readonly ok: false; readonly refusal: PreviewRefusal };

/** Longer than any token this module issues; refused before any parsing. */
const MAX_TOKEN_LENGTH = 4_096;

/**
 * Checks a preview token against the server key and against what the confirm call is about to do.
 *
 * In order, stopping at the first failure: the token's shape and its signature over the whole
 * payload (`malformed` / `bad-signature`: a flipped payload byte, a token re-signed with another key,
 * `alg: none` or another algorithm all fail here, before any claim is read); the `typ` header and
 * the claims' shape (`malformed`); expiry against `nowMs` (`expired`, with the instant it expired);
 * then the binding: confirm tool, principal/tenant/on-behalf-of, arguments hash, resource key, policy
 * version, and — when given — resource version and preview hash.
 *
 * Pure apart from the signature check: no store is read or written, so verifying a token does not
 * use it up, and approval and single use are not checked here (see `PreviewGate.confirm`). Never
 * throws for any token string; throws TypeError only for an unusable key.
 */
export async function verifyPreviewToken(
  token: string,
  expected: ExpectedPreview,
  key: PreviewKey,
  nowMs: number,
): Promise<PreviewVerification> {
  const material = verifyingMaterial(key);
  if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH) {
    return refuse({ reason: 'malformed' });
  }
  let payloadBytes: Uint8Array;
  let typ: unknown;
  try {
    const verified = await compactVerify(token, material, { algorithms: [key.alg] });
    payloadBytes = verified.payload;
    typ = verified.protectedHeader.typ;
  } catch (err) {
    return refuse({ reason: signatureFailed(err) ? 'bad-signature' : 'malformed' });
  }
  if (typ !== PREVIEW_TOKEN_TYPE) return refuse({ reason: 'malformed' });
  const parsed = previewPayloadSchema.safeParse(parseJson(payloadBytes));
  if (!parsed.success) return refuse({ reason: 'malformed' });
  const claims = claimsOf(parsed.data);

  if (nowMs >= claims.expiresAtMs) return refuse({ reason: 'expired', expiredAtMs: claims.expiresAtMs });
  if (claims.tool !== expected.tool) return refuse({ reason: 'wrong-tool', tool: claims.tool });
  if (
    claims.tenant !== expected.tenant ||
    claims.principalId !== expected.principalId ||
    claims.onBehalfOf !== expected.onBehalfOf
  ) {
    return refuse({ reason: 'wrong-principal' });
  }
  if (claims.argumentsHash !== expected.argumentsHash) return refuse({ reason: 'arguments-changed' });
  if (claims.resourceKey !== expected.resourceKey) return refuse({ reason: 'resource-mismatch' });
  if (claims.policyVersion !== expected.policyVersion) {
    return refuse({
      reason: 'policy-changed',
      previewedPolicy: claims.policyVersion,
      currentPolicy: expected.policyVersion,
    });
  }
  if (expected.resourceVersion !== undefined && claims.resourceVersion !== expected.resourceVersion) {
    return refuse({
      reason: 'resource-changed',
      previewedVersion: claims.resourceVersion,
      currentVersion: expected.resourceVersion,
    });
  }
  if (expected.previewHash !== undefined && claims.previewHash !== expected.previewHash) {
    return refuse({ reason: 'preview-changed' });
  }
  return { ok: true, claims };
}

/** Claims read WITHOUT checking anything: for logs and ops screens only, never for a decision. */
export function peekPreviewClaims(token: string): PreviewClaims | undefined {
  try {
    const segment = token.split('.')[1];
    if (segment === undefined) return undefined;
    const parsed = previewPayloadSchema.safeParse(parseJson(base64url.decode(segment)));
    return parsed.success ? claimsOf(parsed.data) : undefined;
  } catch {
    return undefined;
  }
}

function signatureFailed(err: unknown): boolean {
  return err instanceof errors.JWSSignatureVerificationFailed || err instanceof errors.JOSEAlgNotAllowed;
}

function parseJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return undefined;
  }
}

function refuse(refusal: PreviewRefusal): PreviewVerification {
  return { ok: false, refusal };
}
