import { z } from 'zod';
import { canonicalJson, sha256Hex } from '../../core/canonical-json.js';
import type { ApprovalRule } from '../../ports/approval-store.js';

/** The JWS `typ` of a preview token, so that no other token signed by the same key passes as one. */
export const PREVIEW_TOKEN_TYPE = 'tg-preview+jwt';

/** How long a preview token lives unless told otherwise: 10 minutes. */
export const DEFAULT_PREVIEW_TTL_MS = 600_000;

/**
 * What a preview token binds: who may confirm, which tool, exactly which arguments, and the state of
 * the world the preview was computed from. The confirm is refused if any of it differs.
 */
export interface PreviewBinding {
  /** The verified principal's id (never taken from arguments). */
  readonly principalId: string;
  readonly tenant: string;
  /** The user an agent acted for when it previewed; the confirm must act for the same one. */
  readonly onBehalfOf?: string;
  /** The confirm tool's name (e.g. `create_purchase_order`). */
  readonly tool: string;
  /** {@link argumentsHash} of the arguments the confirm will carry (the token itself excluded). */
  readonly argumentsHash: string;
  /** The resource the action changes, e.g. `t1:inventory:SKU-7` (the tools' conflict key). */
  readonly resourceKey: string;
  /** That resource's version when the preview was computed; a later change invalidates the token. */
  readonly resourceVersion: string;
  /** The business-rule set in force at preview time (`PolicyEngine.version`). */
  readonly policyVersion: string;
  /** {@link argumentsHash} of what the preview showed (lines, totals): the exact previewed amounts. */
  readonly previewHash?: string;
  /** The token is unusable until people approve it (an approval request, see `PreviewGate.confirm`). */
  readonly requiresApproval: boolean;
  /** Why, and how many distinct people must approve; signed, so no caller can change it. */
  readonly approvalRule?: ApprovalRule;
}

/** A token's full claims: the binding plus its id and lifetime. */
export interface PreviewClaims extends PreviewBinding {
  /** Token id (JWT `jti`): the single-use key and what an approver approves. */
  readonly jti: string;
  readonly issuedAtMs: number;
  readonly expiresAtMs: number;
}

/**
 * RFC 8785 canonical JSON of `value`, hashed with SHA-256 (lowercase hex): equal JSON data gives an
 * equal hash whatever its key order. Throws ToolgateError SCHEMA_INVALID for a value that is not
 * JSON data (see `canonicalJson`).
 */
export function argumentsHash(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

const text = z.string().min(1).max(512);
const hash = z.string().regex(/^[0-9a-f]{64}$/);

/** The JWT payload as signed: short claim names keep the token small; times in whole seconds. */
export const previewPayloadSchema = z.strictObject({
  jti: text,
  iat: z.int().nonnegative(),
  exp: z.int().positive(),
  sub: text,
  ten: text,
  obo: text.optional(),
  tool: text,
  args: hash,
  res: text,
  ver: z.string().max(512),
  pol: text,
  sum: hash.optional(),
  apr: z.boolean(),
  apx: z.strictObject({ r: text, w: z.string().min(1).max(1_000), n: z.int().min(1).max(10) }).optional(),
});

export type PreviewPayload = z.infer<typeof previewPayloadSchema>;

/** The payload that carries `claims`. Times are whole seconds (JWT NumericDate). */
export function payloadOf(claims: PreviewClaims): PreviewPayload {
  return {
    jti: claims.jti,
    iat: Math.floor(claims.issuedAtMs / 1000),
    exp: Math.floor(claims.expiresAtMs / 1000),
    sub: claims.principalId,
    ten: claims.tenant,
    ...(claims.onBehalfOf === undefined ? {} : { obo: claims.onBehalfOf }),
    tool: claims.tool,
    args: claims.argumentsHash,
    res: claims.resourceKey,
    ver: claims.resourceVersion,
    pol: claims.policyVersion,
    ...(claims.previewHash === undefined ? {} : { sum: claims.previewHash }),
    apr: claims.requiresApproval,
    ...(claims.approvalRule === undefined
      ? {}
      : {
          apx: {
            r: claims.approvalRule.rule,
            w: claims.approvalRule.reason,
            n: claims.approvalRule.approvers,
          },
        }),
  };
}

/** The claims a validated payload carries. */
export function claimsOf(payload: PreviewPayload): PreviewClaims {
  return {
    jti: payload.jti,
    issuedAtMs: payload.iat * 1000,
    expiresAtMs: payload.exp * 1000,
    principalId: payload.sub,
    tenant: payload.ten,
    ...(payload.obo === undefined ? {} : { onBehalfOf: payload.obo }),
    tool: payload.tool,
    argumentsHash: payload.args,
    resourceKey: payload.res,
    resourceVersion: payload.ver,
    policyVersion: payload.pol,
    ...(payload.sum === undefined ? {} : { previewHash: payload.sum }),
    requiresApproval: payload.apr,
    ...(payload.apx === undefined
      ? {}
      : { approvalRule: { rule: payload.apx.r, reason: payload.apx.w, approvers: payload.apx.n } }),
  };
}
