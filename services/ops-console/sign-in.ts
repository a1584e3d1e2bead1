import type { JSONWebKeySet } from 'jose';
import { createPrincipalVerifier, type PrincipalVerifier } from '../../libs/auth/principal-verifier.js';
import { PrincipalRefusedError } from '../../libs/auth/principal-refusal.js';
import { consoleRoles, type ConsoleRole } from './roles.js';

/** An operator proved by a token: who, with which console roles, until when (epoch seconds). */
export interface VerifiedOperator {
  readonly operator: string;
  readonly roles: readonly ConsoleRole[];
  /** The tenants they may see, in claim form (`['*']`: every tenant); see {@link OperatorTokens}. */
  readonly tenants: readonly string[];
  readonly exp: number;
}

/** Why a sign-in token was refused, in words safe to show (never echoes the token). */
export class SignInRefused extends Error {
  override readonly name = 'SignInRefused';
}

/**
 * Checks operators' bearer tokens: principal assertions (the format `signPrincipal` writes and the
 * executor checks, libs/auth) signed by a key of the identity provider's JWKS, for the console's
 * issuer and audience. The principal's id is the operator, its `roles` claim their console roles.
 * A valid token without any console role is refused: signing in would show nothing one may do.
 * The tenants the operator may see come from the token's `tenants` claim (an array of tenant names;
 * `*` grants every tenant), and without one from the principal's own `tenant`: an operator of one
 * customer sees that customer's cases and records only, unless the identity provider says more.
 */
export class OperatorTokens {
  readonly #verifier: PrincipalVerifier;

  constructor(options: { readonly jwks: JSONWebKeySet; readonly issuer: string; readonly audience: string }) {
    this.#verifier = createPrincipalVerifier({
      keys: options.jwks,
      issuer: options.issuer,
      audience: options.audience,
    });
  }

  /** The operator `token` proves, or a {@link SignInRefused} saying why not. */
  async verify(token: string): Promise<VerifiedOperator> {
    let principal;
    let claims: { exp?: unknown; tenants?: unknown };
    try {
      principal = await this.#verifier.verify(token.trim());
      claims = payloadOf(token);
    } catch (err) {
      if (err instanceof PrincipalRefusedError)
        throw new SignInRefused(err.message.replace('principal assertion', 'sign-in token'));
      throw new SignInRefused('The sign-in token is missing or malformed.');
    }
    if (typeof claims.exp !== 'number') throw new SignInRefused('The sign-in token has no expiry.');
    const tenants = claims.tenants === undefined ? [principal.tenant] : claims.tenants;
    if (
      !Array.isArray(tenants) ||
      tenants.length > 256 ||
      !tenants.every((t): t is string => typeof t === 'string' && t.length > 0 && t.length <= 256)
    )
      throw new SignInRefused('The sign-in token’s tenants claim must be a list of tenant names.');
    const roles = consoleRoles(principal.roles);
    if (roles.length === 0) {
      throw new SignInRefused(
        'The sign-in token carries none of the console roles (viewer, operator, approver).',
      );
    }
    return { operator: principal.id, roles, tenants, exp: claims.exp };
  }
}

/** The claims of a token the verifier already accepted (so its payload is JSON). */
function payloadOf(token: string): { exp?: unknown; tenants?: unknown } {
  const payload = token.trim().split('.')[1] ?? '';
  return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as {
    exp?: unknown;
    tenants?: unknown;
  };
}
