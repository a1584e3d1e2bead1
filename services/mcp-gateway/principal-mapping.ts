import type { JWTPayload } from 'jose';
import type { Principal } from '../../libs/core/types.js';

/**
 * How a verified access token's claims become the toolgate principal the gateway signs for the
 * executors. Configuration, not code: each field names a claim or fixes a value.
 */
export interface PrincipalMapping {
  /** Claim holding the principal id (default `sub`). */
  readonly idClaim?: string;
  /** Claim holding the tenant; or `tenant` fixes one tenant for every caller of this gateway. */
  readonly tenantClaim?: string;
  readonly tenant?: string;
  /** Claim holding roles, a string array or a space-separated string (default `roles`). */
  readonly rolesClaim?: string;
  /** The principal kind (default `user`). */
  readonly kind?: Principal['kind'];
  /**
   * Token scopes to drop before they become toolgate scopes: the gateway's own access scopes
   * (e.g. `mcp:tools`) say "may use MCP", not "may call a tool".
   */
  readonly gatewayScopes?: readonly string[];
  /** Prefix a token scope must carry to count (stripped), e.g. `toolgate:`; default none. */
  readonly scopePrefix?: string;
}

/** Why claims did not make a principal; the gateway answers 401 invalid_token with it. */
export class PrincipalMappingError extends Error {}

/**
 * The principal for verified claims and their scopes. Throws {@link PrincipalMappingError} when
 * the id or tenant is missing or not a non-empty string: a caller without a tenant is refused,
 * never silently mapped to an empty tool list. Pure.
 */
export function principalFromClaims(
  claims: JWTPayload,
  scopes: readonly string[],
  mapping: PrincipalMapping,
): Principal {
  const id = claims[mapping.idClaim ?? 'sub'];
  if (typeof id !== 'string' || id === '') {
    throw new PrincipalMappingError(`The access token has no ${mapping.idClaim ?? 'sub'} claim.`);
  }
  const tenant = mapping.tenant ?? claims[mapping.tenantClaim ?? 'tenant'];
  if (typeof tenant !== 'string' || tenant === '') {
    throw new PrincipalMappingError(`The access token has no ${mapping.tenantClaim ?? 'tenant'} claim.`);
  }
  const dropped = new Set(mapping.gatewayScopes ?? []);
  const prefix = mapping.scopePrefix ?? '';
  const toolScopes = scopes
    .filter((s) => !dropped.has(s) && s.startsWith(prefix) && s.length > prefix.length)
    .map((s) => s.slice(prefix.length));
  return {
    id,
    tenant,
    kind: mapping.kind ?? 'user',
    scopes: [...new Set(toolScopes)].sort(),
    roles: stringList(claims[mapping.rolesClaim ?? 'roles']),
  };
}

function stringList(value: unknown): string[] {
  if (typeof value === 'string') return value.split(' ').filter((s) => s !== '');
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}
