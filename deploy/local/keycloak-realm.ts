/**
 * The realm the local Keycloak imports at every start (it keeps nothing between starts: in-memory
 * database). It is what a deployment configures at its own identity provider for the ops console,
 * reduced to what the tests need:
 * - realm roles `viewer`, `operator`, `approver` (the console's roles);
 * - a confidential client for the console: authorization code flow only, PKCE with S256 required,
 *   redirect URIs on loopback, and protocol mappers that put the user's realm roles into a `roles`
 *   claim and the user attribute `tenants` into a `tenants` claim (ID token, access token, userinfo);
 * - a service-account client with the realm-management roles to manage users, through which tests
 *   create their own users, take roles away and disable users (Keycloak's admin REST API).
 * Users are created by each test, so tests never share one.
 */

/** The realm's name. */
export const KEYCLOAK_REALM = 'toolgate';
/** The console's client in the realm. */
export const KEYCLOAK_CONSOLE_CLIENT = { id: 'ops-console', secret: 'ops-console-local-secret' } as const;
/** The client tests manage users with (client credentials grant; realm-management roles). */
export const KEYCLOAK_ADMIN_CLIENT = { id: 'toolgate-admin', secret: 'toolgate-admin-local-secret' } as const;

/** The console's realm roles. */
const ROLES = ['viewer', 'operator', 'approver'] as const;

/** Keycloak's declarative user profile, allowing attributes it does not declare (e.g. `tenants`). */
const USER_PROFILE = {
  unmanagedAttributePolicy: 'ADMIN_EDIT',
  attributes: [
    {
      name: 'username',
      displayName: '${username}',
      permissions: { view: ['admin', 'user'], edit: ['admin'] },
    },
    { name: 'email', displayName: '${email}', permissions: { view: ['admin', 'user'], edit: ['admin'] } },
  ],
  groups: [],
};

const claimMapper = (name: string, mapper: string, extra: Record<string, string>) => ({
  name,
  protocol: 'openid-connect',
  protocolMapper: mapper,
  config: {
    'claim.name': name,
    multivalued: 'true',
    'jsonType.label': 'String',
    'id.token.claim': 'true',
    'access.token.claim': 'true',
    'userinfo.token.claim': 'true',
    ...extra,
  },
});

/** The realm as Keycloak's import JSON. */
export function keycloakRealm(): Record<string, unknown> {
  return {
    realm: KEYCLOAK_REALM,
    enabled: true,
    // Short-lived access tokens, as a deployment would have: the console refreshes on expiry.
    accessTokenLifespan: 300,
    roles: { realm: ROLES.map((name) => ({ name })) },
    components: {
      'org.keycloak.userprofile.UserProfileProvider': [
        {
          providerId: 'declarative-user-profile',
          config: { 'kc.user.profile.config': [JSON.stringify(USER_PROFILE)] },
        },
      ],
    },
    clients: [
      {
        clientId: KEYCLOAK_CONSOLE_CLIENT.id,
        enabled: true,
        publicClient: false,
        clientAuthenticatorType: 'client-secret',
        secret: KEYCLOAK_CONSOLE_CLIENT.secret,
        standardFlowEnabled: true,
        implicitFlowEnabled: false,
        directAccessGrantsEnabled: false,
        serviceAccountsEnabled: false,
        redirectUris: ['http://127.0.0.1:*'],
        webOrigins: [],
        attributes: {
          'pkce.code.challenge.method': 'S256',
          'post.logout.redirect.uris': 'http://127.0.0.1:*',
        },
        protocolMappers: [
          claimMapper('roles', 'oidc-usermodel-realm-role-mapper', {}),
          claimMapper('tenants', 'oidc-usermodel-attribute-mapper', { 'user.attribute': 'tenants' }),
        ],
      },
      {
        clientId: KEYCLOAK_ADMIN_CLIENT.id,
        enabled: true,
        publicClient: false,
        clientAuthenticatorType: 'client-secret',
        secret: KEYCLOAK_ADMIN_CLIENT.secret,
        standardFlowEnabled: false,
        directAccessGrantsEnabled: false,
        serviceAccountsEnabled: true,
      },
    ],
    users: [
      {
        username: `service-account-${KEYCLOAK_ADMIN_CLIENT.id}`,
        enabled: true,
        serviceAccountClientId: KEYCLOAK_ADMIN_CLIENT.id,
        clientRoles: { 'realm-management': ['manage-users', 'view-users', 'query-users', 'view-realm'] },
      },
    ],
  };
}
