import type { JSONWebKeySet } from 'jose';
import { createPrincipalVerifier, type PrincipalVerifier } from '../../libs/auth/principal-verifier.js';
import { PrincipalRefusedError } from '../../libs/auth/principal-refusal.js';
import { consoleRoles, type ConsoleRole } from './roles.js';

/**
 * An operator proved by a token: who, with which console roles, in which tenants (claim form, `*` =
 * all: the token's `tenants` claim, else its principal's one tenant), until when (epoch seconds).
 */
export interface VerifiedOperator {
  readonly operator: string;
  readonly roles: readonly ConsoleRole[];
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
    let claims: TokenClaims;
    try {
      principal = await this.#verifier.verify(token.trim());
      claims = claimsOf(token);
    } catch (err) {
      if (err instanceof PrincipalRefusedError)
        throw new SignInRefused(err.message.replace('principal assertion', 'sign-in token'));
      throw new SignInRefused('The sign-in token is missing or malformed.');
    }
    const roles = consoleRoles(principal.roles);
    if (roles.length === 0) {
      throw new SignInRefused(
        'The sign-in token carries none of the console roles (viewer, operator, approver).',
      );
    }
    const tenants = Array.isArray(claims.tenants)
      ? claims.tenants.filter((t): t is string => typeof t === 'string')
      : [principal.tenant];
    return { operator: principal.id, roles, tenants, exp: claims.exp };
  }
}

interface TokenClaims {
  readonly exp: number;
  readonly tenants?: unknown;
}

/** The `exp` and `tenants` claims of a token the verifier already accepted (so it has an expiry). */
function claimsOf(token: string): TokenClaims {
  const payload = token.trim().split('.')[1] ?? '';
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Partial<TokenClaims>;
  if (typeof claims.exp !== 'number') throw new SignInRefused('The sign-in token has no expiry.');
  return { exp: claims.exp, tenants: claims.tenants };
}
