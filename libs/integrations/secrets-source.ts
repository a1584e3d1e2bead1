import type { Secret } from './secret.js';

/**
 * Where integrations read credentials from: a vault, a mounted secrets file, a test
 * map. Names are slash-separated paths, e.g. `oauth/<tenant>/<audience>/client_secret`, so one
 * source holds every tenant's credentials and a tenant never reads another's.
 *
 * `get` resolves to undefined for a name that is not set and throws only when the source itself
 * cannot be read. Implementations re-read rotated values on their own schedule; callers must not
 * cache the result beyond one use.
 */
export interface SecretsSource {
  get(name: string): Promise<Secret | undefined>;
}

/** The names a tenant's OAuth client credentials for `audience` are stored under. */
export function clientCredentialNames(
  tenant: string,
  audience: string,
): { readonly clientId: string; readonly clientSecret: string } {
  const base = `oauth/${tenant}/${audience}`;
  return { clientId: `${base}/client_id`, clientSecret: `${base}/client_secret` };
}
