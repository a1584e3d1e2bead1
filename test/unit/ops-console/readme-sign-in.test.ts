import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadLocalConfig } from '../../../deploy/local/config.js';
import { KEYCLOAK_CONSOLE_CLIENT, keycloakRealm } from '../../../deploy/local/keycloak-realm.js';
import { keycloakIssuer } from '../../../deploy/local/keycloak-server.js';
import { loadOpsConsoleConfig } from '../../../services/ops-console/config.js';

/**
 * The console README's "Sign-in locally with Keycloak" steps, as written: its npm scripts exist,
 * and its settings are accepted by the console and fit the local realm (issuer, client, secret,
 * redirect and post-logout URIs). The sign-in itself runs against that realm in
 * test/integration/ops-console/oidc-sign-in.test.ts.
 */
const README = readFileSync(new URL('../../../services/ops-console/README.md', import.meta.url), 'utf8');
const PACKAGE = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
  scripts: Record<string, string>;
};

function section(title: string): string {
  const start = README.indexOf(`\n### ${title}\n`);
  if (start < 0) throw new Error(`services/ops-console/README.md has no "${title}" section`);
  const end = README.indexOf('\n## ', start + 1);
  return README.slice(start, end < 0 ? undefined : end);
}

/** The `VAR=value` lines of the section's sh block, `$(openssl rand -base64 32)` run as it would be. */
function settings(text: string): Record<string, string> {
  const block = /```sh\n([\s\S]*?)```/.exec(text)?.[1];
  if (block === undefined) throw new Error('no sh block');
  const env: Record<string, string> = {};
  for (const line of block.split('\n').filter(Boolean)) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (m === null) throw new Error(`not a setting: ${line}`);
    env[m[1]!] = m[2] === '$(openssl rand -base64 32)' ? randomBytes(32).toString('base64') : m[2]!;
  }
  return env;
}

/** Keycloak's redirect URI rule for a pattern ending in `*`: a prefix match. */
function allowedBy(patterns: readonly string[], uri: string): boolean {
  return patterns.some((p) => (p.endsWith('*') ? uri.startsWith(p.slice(0, -1)) : uri === p));
}

describe('README "Sign-in locally with Keycloak"', () => {
  const text = section('Sign-in locally with Keycloak');

  it('names npm scripts that exist', () => {
    for (const script of text.match(/npm run ([a-z:-]+)/g)!.map((s) => s.slice('npm run '.length)))
      expect(PACKAGE.scripts[script], script).toBeDefined();
  });

  it('gives settings the console accepts and the local realm fits', () => {
    const env = settings(text);
    const config = loadOpsConsoleConfig({
      KAFKA_BROKERS: '127.0.0.1:19092',
      SCHEMA_REGISTRY_URL: 'http://127.0.0.1:18081/apis/ccompat/v7',
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test',
      REDIS_URL: 'redis://127.0.0.1:6379',
      ...env,
    });
    const oidc = config.auth.oidc!;
    expect(oidc.issuer).toBe(keycloakIssuer(loadLocalConfig({})));
    expect(oidc.clientId).toBe(KEYCLOAK_CONSOLE_CLIENT.id);
    expect(oidc.clientSecret).toBe(KEYCLOAK_CONSOLE_CLIENT.secret);
    expect(config.auth.devLogin).toBe(false);
    const client = (keycloakRealm().clients as Record<string, unknown>[]).find(
      (c) => c.clientId === KEYCLOAK_CONSOLE_CLIENT.id,
    )! as { redirectUris: string[]; attributes: Record<string, string> };
    expect(allowedBy(client.redirectUris, oidc.redirectUri)).toBe(true);
    expect(
      allowedBy([client.attributes['post.logout.redirect.uris']!], `${config.origin}/login?signed-out`),
    ).toBe(true);
    expect(client.attributes['pkce.code.challenge.method']).toBe('S256');
  });
});
