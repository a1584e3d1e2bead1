/**
 * Gives integrations a bearer token for calling `audience` on behalf of `tenant`:
 * the one place credentials are resolved, cached and refreshed, so a rotation or a refresh race is
 * solved once for every tool.
 *
 * Contract:
 * - `getToken` resolves to a token valid for at least the provider's refresh margin, or throws a
 *   ToolgateError (never an error whose text carries a credential).
 * - Concurrent callers for the same (tenant, audience) share one fetch.
 * - `invalidate(tenant, audience, token)` drops `token` from the cache when the downstream refused it
 *   (revoked early); the next `getToken` fetches a new one. A different cached token is kept.
 */
export interface TokenProvider {
  getToken(tenant: string, audience: string, signal?: AbortSignal): Promise<string>;
  invalidate(tenant: string, audience: string, token: string): void;
}
