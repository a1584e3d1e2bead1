import type { Principal } from '../../libs/core/types.js';
import type { CrmViewer } from '../downstreams/crm/crm-api.js';

/** The support role: staff (or their assistants) who act on any customer's behalf within a tenant. */
export const SUPPORT_ROLE = 'support';

/**
 * Roles that may act on any order of their tenant: support, and the managers support refusals are
 * routed to (support may refund at most $50 per order). Their limits differ; that is the policy's job.
 */
export const ORDER_STAFF_ROLES: readonly string[] = [SUPPORT_ROLE, 'manager'];

/** Whether the verified principal holds `role`. */
export function hasRole(principal: Principal, role: string): boolean {
  return principal.roles.includes(role);
}

/**
 * The people the principal speaks for: itself and, for an agent acting on a user's behalf, that
 * user. Ownership checks accept either, never anything taken from the call's arguments.
 */
export function actingIdentities(principal: Principal): readonly string[] {
  return principal.onBehalfOf === undefined ? [principal.id] : [principal.id, principal.onBehalfOf];
}

/**
 * The identity a forwarded user token would carry to the CRM: the user the agent acts
 * for (else the principal itself) with the principal's verified roles. The CRM then applies its own
 * access rules, so the agent can never read more than that user could.
 */
export function crmViewer(principal: Principal): CrmViewer {
  return { user_id: principal.onBehalfOf ?? principal.id, roles: [...principal.roles] };
}
