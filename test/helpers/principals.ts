import type { Principal } from '../../libs/core/types.js';

/**
 * An agent principal `id` of tenant `t1` acting on behalf of user `onBehalfOf`, holding exactly
 * `roles` and `scopes`; `overrides` replace any field (the tenant, say).
 */
export function agentPrincipal(
  id: string,
  onBehalfOf: string,
  roles: readonly string[],
  scopes: readonly string[],
  overrides: Partial<Principal> = {},
): Principal {
  return { id, tenant: 't1', kind: 'agent', onBehalfOf, roles, scopes, ...overrides };
}
