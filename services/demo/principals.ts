import type { Principal } from '../../libs/core/types.js';

/**
 * The verified callers of the story. In production the agent backend's auth layer builds these
 * from a login session; here they are fixed. Each agent session has its own id, so the audit log
 * says which conversation acted.
 */
export const DEMO_PRINCIPALS = {
  /** The storefront assistant in Ana's signed-in chat (customer C-1). */
  ana: {
    id: 'storefront:C-1',
    tenant: 't1',
    kind: 'agent',
    onBehalfOf: 'C-1',
    roles: ['customer'],
    scopes: ['orders:read', 'refunds:write', 'crm:read'],
  },
  /** The storefront assistant in Ben's chat (customer C-2). */
  ben: {
    id: 'storefront:C-2',
    tenant: 't1',
    kind: 'agent',
    onBehalfOf: 'C-2',
    roles: ['customer'],
    scopes: ['orders:read', 'refunds:write', 'crm:read'],
  },
  /** The support-desk assistant working for support rep S-1: may act on any order, up to $50. */
  supportDesk: {
    id: 'support-desk:S-1',
    tenant: 't1',
    kind: 'agent',
    onBehalfOf: 'S-1',
    roles: ['support'],
    scopes: ['orders:read', 'refunds:write', 'crm:read', 'customers:read', 'inventory:write'],
  },
} as const satisfies Record<string, Principal>;
