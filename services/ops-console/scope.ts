import { tenantScopeOf, type TenantScope } from '../../libs/core/tenant-scope.js';
import type { OperatorSession } from './session.js';

/**
 * The tenants a signed-in operator may see and act on: the one place every console list, page,
 * action, audit search and chain check (approvals included) takes its scope from. Pure.
 */
export function scopeOf(session: Pick<OperatorSession, 'tenants'>): TenantScope {
  return tenantScopeOf(session.tenants);
}

/**
 * A scope as a store filter (`tenants` of CaseFilter, AuditQuery, WhoDidOptions): undefined for
 * every tenant (no filter), else the scope's tenants (an empty list matches nothing). Pure.
 */
export function tenantsFilter(scope: TenantScope): readonly string[] | undefined {
  return scope.all ? undefined : scope.tenants;
}
