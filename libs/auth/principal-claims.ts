import { z } from 'zod';
import type { Principal } from '../core/types.js';

/**
 * The JWS `typ` header of a principal assertion, so that no other JWT signed by the same key (an id
 * token, say) is accepted as one.
 */
export const PRINCIPAL_TOKEN_TYPE = 'tg-principal+jwt';

/** The JWS algorithms a principal assertion may use: asymmetric only, never `none` or an HMAC. */
export const PRINCIPAL_ALGORITHMS = ['EdDSA', 'Ed25519', 'ES256'] as const;
export type PrincipalAlgorithm = (typeof PRINCIPAL_ALGORITHMS)[number];

const id = z.string().min(1).max(256);
const names = z.array(z.string().min(1).max(256)).max(256);

/**
 * The private claims of a principal assertion. `sub` is the principal id and `obo` the user an agent
 * acts for. Registered claims (iss, aud, exp, iat) are checked by the verifier, not here.
 */
export const principalClaimsSchema = z.object({
  sub: id,
  tenant: id,
  kind: z.enum(['user', 'agent', 'service']),
  scopes: names,
  roles: names,
  obo: id.optional(),
  /** Opaque reference to the user's delegated token (see `Principal.delegationRef`); never a token. */
  dref: id.optional(),
});

export type PrincipalClaims = z.infer<typeof principalClaimsSchema>;

/** The claims that carry `principal`. */
export function claimsOf(principal: Principal): PrincipalClaims {
  return {
    sub: principal.id,
    tenant: principal.tenant,
    kind: principal.kind,
    scopes: [...principal.scopes],
    roles: [...principal.roles],
    ...(principal.onBehalfOf === undefined ? {} : { obo: principal.onBehalfOf }),
    ...(principal.delegationRef === undefined ? {} : { dref: principal.delegationRef }),
  };
}

/** The principal carried by validated claims, deeply frozen so nothing downstream can widen it. */
export function principalOf(claims: PrincipalClaims): Principal {
  return Object.freeze({
    id: claims.sub,
    tenant: claims.tenant,
    kind: claims.kind,
    scopes: Object.freeze([...claims.scopes]),
    roles: Object.freeze([...claims.roles]),
    ...(claims.obo === undefined ? {} : { onBehalfOf: claims.obo }),
    ...(claims.dref === undefined ? {} : { delegationRef: claims.dref }),
  });
}
