/**
 * The tenants a person may see and act on. `all` is given on purpose (a role or claim that names
 * every tenant, `*`); otherwise exactly the listed tenants, and an empty list sees nothing.
 */
export type TenantScope =
  { readonly all: true } | { readonly all: false; readonly tenants: readonly string[] };

/** The claim value that grants every tenant. */
export const ALL_TENANTS_CLAIM = '*';

/** The scope of a `tenants` claim: `*` anywhere in it grants all tenants; otherwise the distinct names. Pure. */
export function tenantScopeOf(claim: readonly string[]): TenantScope {
  if (claim.includes(ALL_TENANTS_CLAIM)) return { all: true };
  return { all: false, tenants: [...new Set(claim.filter((t) => t.length > 0))].sort() };
}

/** Whether `scope` covers `tenant`. Pure. */
export function inTenantScope(scope: TenantScope, tenant: string): boolean {
  return scope.all || scope.tenants.includes(tenant);
}

/** The claim form of `scope` (`['*']` for all), for a session record. Pure. */
export function tenantClaimOf(scope: TenantScope): string[] {
  return scope.all ? [ALL_TENANTS_CLAIM] : [...scope.tenants];
}
