import { randomBytes } from 'node:crypto';
import { loadLocalConfig } from '../../deploy/local/config.js';
import { acquireKeycloak, keycloakIssuer, releaseKeycloak } from '../../deploy/local/keycloak-server.js';
import { KEYCLOAK_ADMIN_CLIENT, KEYCLOAK_CONSOLE_CLIENT } from '../../deploy/local/keycloak-realm.js';
import { stderrLog } from '../../deploy/local/log.js';
import { uniqueName } from './names.js';

/** A user a test created at the local Keycloak. */
export interface KeycloakUser {
  readonly id: string;
  readonly username: string;
  readonly password: string;
}

/** The local Keycloak's realm, and what tests do through its admin REST API. */
export interface TestKeycloak {
  /** The realm's issuer URL (OPS_CONSOLE_OIDC_ISSUER). */
  readonly issuer: string;
  /** The console's client in the realm. */
  readonly client: { readonly id: string; readonly secret: string };
  /** A new enabled user with a random name and password, the realm `roles` and the `tenants` attribute. */
  createUser(roles: readonly string[], tenants: readonly string[]): Promise<KeycloakUser>;
  /** Takes realm role `role` away from `user`. */
  removeRole(user: KeycloakUser, role: string): Promise<void>;
  /** Disables `user`: Keycloak then refuses their refresh tokens. */
  disable(user: KeycloakUser): Promise<void>;
  /**
   * Deletes the users this helper created (Keycloak keeps its database between starts) and drops
   * this process's lease (the run's teardown stops Keycloak when no lease is left).
   */
  release(): Promise<void>;
}

/**
 * For a test file that needs the identity provider: starts the local Keycloak (deploy/local) unless
 * it runs, or reuses it, and takes a lease for this worker. Only files that call this pay for
 * Keycloak's start; the integration run's teardown stops it once no worker holds a lease.
 */
export async function useKeycloak(): Promise<TestKeycloak> {
  const cfg = loadLocalConfig(process.env);
  await acquireKeycloak(cfg, stderrLog);
  const issuer = keycloakIssuer(cfg);
  const admin = `${issuer.replace('/realms/', '/admin/realms/')}`;

  const adminToken = async (): Promise<string> => {
    const res = await fetch(`${issuer}/protocol/openid-connect/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: KEYCLOAK_ADMIN_CLIENT.id,
        client_secret: KEYCLOAK_ADMIN_CLIENT.secret,
      }),
    });
    if (!res.ok) throw new Error(`keycloak admin token: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { access_token: string }).access_token;
  };
  const call = async (method: string, path: string, body?: unknown): Promise<Response> => {
    const res = await fetch(`${admin}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${await adminToken()}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!res.ok) throw new Error(`keycloak admin ${method} ${path}: ${res.status} ${await res.text()}`);
    return res;
  };
  const created: string[] = [];
  const roleRepresentations = async (roles: readonly string[]) =>
    Promise.all(roles.map(async (r) => (await call('GET', `/roles/${r}`)).json()));

  return {
    issuer,
    client: KEYCLOAK_CONSOLE_CLIENT,
    async createUser(roles, tenants) {
      const username = uniqueName('op')
        .toLowerCase()
        .replace(/[^a-z0-9-]/g, '-')
        .slice(0, 60);
      const password = randomBytes(12).toString('base64url');
      const response = await call('POST', '/users', {
        username,
        enabled: true,
        email: `${username}@example.test`,
        emailVerified: true,
        firstName: 'Test',
        lastName: 'Operator',
        attributes: { tenants: [...tenants] },
        credentials: [{ type: 'password', value: password, temporary: false }],
      });
      const id = response.headers.get('location')!.split('/').pop()!;
      created.push(id);
      if (roles.length > 0)
        await call('POST', `/users/${id}/role-mappings/realm`, await roleRepresentations(roles));
      return { id, username, password };
    },
    async removeRole(user, role) {
      await call('DELETE', `/users/${user.id}/role-mappings/realm`, await roleRepresentations([role]));
    },
    async disable(user) {
      await call('PUT', `/users/${user.id}`, { enabled: false });
    },
    async release() {
      for (const id of created.splice(0)) await call('DELETE', `/users/${id}`).catch(() => undefined);
      await releaseKeycloak(cfg, true, stderrLog);
    },
  };
}
