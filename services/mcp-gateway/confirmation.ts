import { createHash, randomUUID } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';
import { canonicalJson } from '../../libs/core/canonical-json.js';
import type { Principal } from '../../libs/core/types.js';
import type { SingleUseStore } from '../../libs/ports/single-use-store.js';

/** The JWT `typ` of a confirmation state: no other token signed with the same secret passes. */
export const CONFIRMATION_TYPE = 'toolgate-mcp-confirmation+jwt';
/** Shortest accepted secret (HS256 wants at least the hash size). */
export const MIN_CONFIRMATION_SECRET_BYTES = 32;
/** Default lifetime of a confirmation state: long enough for a person to read and answer. */
export const DEFAULT_CONFIRMATION_TTL_MS = 5 * 60_000;

/** What signs and remembers confirmations. */
export interface ConfirmationSettings {
  /** HMAC secret, at least {@link MIN_CONFIRMATION_SECRET_BYTES}; shared by every gateway replica. */
  readonly secret: Uint8Array;
  /** Where used states are marked (Redis in production: replicas must share it). */
  readonly store: SingleUseStore;
  readonly ttlMs?: number;
  /** Epoch ms; default Date.now. */
  readonly now?: () => number;
}

/** The call a confirmation is bound to. */
export interface ConfirmedCall {
  readonly principal: Pick<Principal, 'id' | 'tenant'>;
  readonly tool: string;
  readonly version: string;
  readonly args: Record<string, unknown>;
}

export type ConfirmationRefusal = 'forged' | 'expired' | 'mismatch' | 'replayed';

/** The canonical digest of a call's arguments (what a confirmation binds). */
export function argumentsDigest(args: Record<string, unknown>): string {
  return createHash('sha256').update(canonicalJson(args)).digest('base64url');
}

/**
 * A signed, expiring request state for confirming exactly this call: principal (id and tenant),
 * tool name and version, and the canonical digest of the arguments, with a fresh id that makes it
 * single-use. Opaque to the client; it holds no secret and no token (only ids and a digest).
 */
export async function mintConfirmation(settings: ConfirmationSettings, call: ConfirmedCall): Promise<string> {
  assertSecret(settings.secret);
  const nowMs = (settings.now ?? Date.now)();
  const ttlMs = settings.ttlMs ?? DEFAULT_CONFIRMATION_TTL_MS;
  return new SignJWT({
    tenant: call.principal.tenant,
    tool: call.tool,
    version: call.version,
    args: argumentsDigest(call.args),
  })
    .setProtectedHeader({ alg: 'HS256', typ: CONFIRMATION_TYPE })
    .setSubject(call.principal.id)
    .setJti(randomUUID())
    .setIssuedAt(Math.floor(nowMs / 1000))
    .setExpirationTime(Math.floor((nowMs + ttlMs) / 1000))
    .sign(settings.secret);
}

/**
 * Checks a returned state against the call it comes back with and uses it up. In order:
 * signature and type (else `forged`), expiry (`expired`), binding — the same principal, tenant,
 * tool, version and argument digest (`mismatch`) — and single use (`replayed`). `holder` is the
 * logical call redeeming it (its task id): the same call retried after a lost answer passes again
 * (and is then answered from the idempotency store, so it has one effect); any other call with a
 * used state is `replayed`. A state is consumed only once everything else passed.
 */
export async function redeemConfirmation(
  settings: ConfirmationSettings,
  state: string,
  call: ConfirmedCall,
  holder: string,
): Promise<{ readonly ok: true } | { readonly ok: false; readonly refusal: ConfirmationRefusal }> {
  assertSecret(settings.secret);
  const nowSeconds = Math.floor((settings.now ?? Date.now)() / 1000);
  let claims: Record<string, unknown>;
  try {
    ({ payload: claims } = await jwtVerify(state, settings.secret, {
      algorithms: ['HS256'],
      typ: CONFIRMATION_TYPE,
      currentDate: new Date(nowSeconds * 1000),
      clockTolerance: 0,
      requiredClaims: ['exp', 'jti', 'sub'],
    }));
  } catch (err) {
    return { ok: false, refusal: err instanceof errors.JWTExpired ? 'expired' : 'forged' };
  }
  const bound =
    claims.sub === call.principal.id &&
    claims.tenant === call.principal.tenant &&
    claims.tool === call.tool &&
    claims.version === call.version &&
    claims.args === argumentsDigest(call.args);
  if (!bound) return { ok: false, refusal: 'mismatch' };
  const remainingMs = ((claims.exp as number) - nowSeconds) * 1000;
  // Kept a minute past expiry so a state can never become usable again while any replica accepts it.
  const used = await settings.store.consume(
    `mcp-confirmation:${claims.jti as string}`,
    remainingMs + 60_000,
    holder,
  );
  return used === 'consumed' ? { ok: true } : { ok: false, refusal: 'replayed' };
}

/** What the model and the user read when a confirmation is refused. */
export function confirmationRefusalMessage(refusal: ConfirmationRefusal): string {
  switch (refusal) {
    case 'expired':
      return 'The confirmation has expired. Call the tool again to get a new one.';
    case 'replayed':
      return 'The confirmation was already used. Call the tool again to confirm a new call.';
    case 'mismatch':
    case 'forged':
      return 'The confirmation does not belong to this call. Call the tool again to confirm it.';
  }
}

function assertSecret(secret: Uint8Array): void {
  if (secret.byteLength < MIN_CONFIRMATION_SECRET_BYTES) {
    throw new RangeError(`the confirmation secret must be at least ${MIN_CONFIRMATION_SECRET_BYTES} bytes`);
  }
}
