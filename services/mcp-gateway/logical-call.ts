import { createHash } from 'node:crypto';
import { canonicalJson } from '../../libs/core/canonical-json.js';
import type { Principal } from '../../libs/core/types.js';

/** The `_meta` key a client may set on `tools/call` to name one logical call. */
export const CLIENT_KEY_META = 'io.toolgate/idempotency-key';

/** A client key: 1-200 printable ASCII characters. */
const CLIENT_KEY = /^[\x21-\x7e]{1,200}$/;

/**
 * The client-supplied key of a call, when `_meta` carries a well-formed one; undefined otherwise
 * (absent, or not a string of 1-200 printable ASCII characters — ignored rather than refused, so
 * a client that sets something else under the key still gets its call served).
 */
export function clientKeyOf(meta: Record<string, unknown> | undefined): string | undefined {
  const value = meta?.[CLIENT_KEY_META];
  return typeof value === 'string' && CLIENT_KEY.test(value) ? value : undefined;
}

/**
 * The toolgate task id of one MCP `tools/call`: a digest of (principal id, tool, canonical
 * arguments, client key). MCP has no agent-loop coordinates, so the logical call itself is the
 * task: a client repeating the same call (a retry after a dropped connection, a second click) gets
 * the same task id, hence the same idempotency key, and the executor answers the repeat from its
 * idempotency store instead of running it again. A client that means a second, distinct effect
 * with the same arguments sends a different key in `_meta` ({@link CLIENT_KEY_META}).
 * The tenant is not part of it because the idempotency key already is scoped by tenant.
 * Throws ToolgateError SCHEMA_INVALID (from canonicalJson) for arguments JSON cannot hold.
 */
export function logicalTaskId(
  principal: Pick<Principal, 'id'>,
  tool: string,
  args: Record<string, unknown>,
  clientKey: string | undefined,
): string {
  const digest = createHash('sha256')
    .update(canonicalJson([principal.id, tool, args, clientKey ?? null]))
    .digest('base64url');
  return `mcp-${digest.slice(0, 32)}`;
}
