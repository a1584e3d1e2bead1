import { ToolgateError } from '../core/errors.js';
import type { Principal } from '../core/types.js';
import type { TokenReferenceStore } from './token-reference-store.js';

/** The end user a principal acts for: the user an agent acts on behalf of, or the user itself. */
export function delegatingUser(principal: Principal): string {
  return principal.onBehalfOf ?? principal.id;
}

/**
 * Agent-backend side of token forwarding: deposits the user's own token and returns the
 * principal to sign, carrying only the opaque reference. The token is bound to the principal's tenant
 * and user, so the reference is useless for anyone else's call.
 */
export async function withDelegatedToken(
  store: TokenReferenceStore,
  principal: Principal,
  userToken: string,
  ttlMs: number,
): Promise<Principal> {
  const ref = await store.put(userToken, {
    ttlMs,
    tenant: principal.tenant,
    subject: delegatingUser(principal),
  });
  return { ...principal, delegationRef: ref };
}

/**
 * Executor side: the end user's own token for this call, resolved from the verified principal's
 * `delegationRef`. The token is to be sent to the downstream and dropped; never log it or return it.
 *
 * Refusals are UNAUTHORIZED, not retryable, and say what the user must do, not how to get around it:
 * no reference on the principal; a reference unknown, expired or already used; a reference deposited
 * for another tenant or user. An unreachable store is DEPENDENCY_UNAVAILABLE (retryable).
 */
export async function forwardedUserToken(store: TokenReferenceStore, principal: Principal): Promise<string> {
  const ref = principal.delegationRef;
  if (ref === undefined) {
    throw new ToolgateError(
      'UNAUTHORIZED',
      "This action runs with the user's own sign-in, and none was passed with the request.",
      { retryable: false },
    );
  }
  let resolved;
  try {
    resolved = await store.resolve(ref);
  } catch (err) {
    throw new ToolgateError(
      'DEPENDENCY_UNAVAILABLE',
      "The user's sign-in could not be checked right now; the action was not run. Try again shortly.",
      { retryable: true, cause: err },
    );
  }
  if (resolved === undefined) {
    throw new ToolgateError(
      'UNAUTHORIZED',
      "The user's sign-in for this action has expired; ask the user to sign in again.",
      { retryable: false },
    );
  }
  if (resolved.tenant !== principal.tenant || resolved.subject !== delegatingUser(principal)) {
    throw new ToolgateError('UNAUTHORIZED', "The sign-in passed with this request is not the user's.", {
      retryable: false,
    });
  }
  return resolved.token;
}
