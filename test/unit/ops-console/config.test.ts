import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { generatePrincipalKeys } from '../../../libs/auth/principal-keys.js';
import { loadOpsConsoleConfig, OpsConsoleConfigError } from '../../../services/ops-console/config.js';

const secret = randomBytes(32).toString('base64');
const base = {
  KAFKA_BROKERS: '127.0.0.1:19092',
  SCHEMA_REGISTRY_URL: 'http://127.0.0.1:18081/apis/ccompat/v7',
  DATABASE_URL: 'postgres://toolgate:pw@db/toolgate',
  REDIS_URL: 'redis://127.0.0.1:6379',
  OPS_CONSOLE_ORIGIN: 'https://ops.example.com',
  OPS_CONSOLE_SESSION_SECRET: secret,
  OPS_CONSOLE_OIDC_ISSUER: 'https://login.example.com/realms/toolgate',
  OPS_CONSOLE_OIDC_CLIENT_ID: 'ops-console',
  OPS_CONSOLE_OIDC_CLIENT_SECRET: 'client-secret-value',
  OPS_CONSOLE_JWKS: JSON.stringify(generatePrincipalKeys('ops-idp-1').jwks),
};

function problems(env: Record<string, string | undefined>): string[] {
  try {
    loadOpsConsoleConfig(env, () => {
      throw Object.assign(new Error('no file'), { code: 'ENOENT' });
    });
  } catch (err) {
    expect(err).toBeInstanceOf(OpsConsoleConfigError);
    expect((err as Error).message).not.toContain(secret);
    return [...(err as OpsConsoleConfigError).problems];
  }
  throw new Error('the configuration was accepted');
}

describe('loadOpsConsoleConfig', () => {
  it('reads the console settings with their defaults', () => {
    const c = loadOpsConsoleConfig(base);
    expect(c).toMatchObject({
      port: 8080,
      origin: 'https://ops.example.com',
      auth: {
        issuer: 'toolgate-identity',
        audience: 'toolgate-ops-console',
        devLogin: false,
        sessionTtlSec: 28_800,
        sessionIdleSec: 1800,
        oidc: {
          issuer: 'https://login.example.com/realms/toolgate',
          clientId: 'ops-console',
          clientSecret: 'client-secret-value',
          redirectUri: 'https://ops.example.com/auth/callback',
          scopes: ['openid', 'profile'],
          claims: { operator: 'preferred_username', roles: 'roles', tenants: 'tenants' },
        },
      },
    });
    expect(c.auth.jwks?.keys).toHaveLength(1);
    const { OPS_CONSOLE_JWKS: _, ...noKeys } = base;
    expect(loadOpsConsoleConfig(noKeys).auth.jwks).toBeUndefined();
  });

  it('takes a trace viewer URL with {traceId}, http(s) only', () => {
    expect(loadOpsConsoleConfig(base).traceUrl).toBeUndefined();
    const url = 'https://tempo.example/trace/{traceId}';
    expect(loadOpsConsoleConfig({ ...base, OPS_CONSOLE_TRACE_URL: url }).traceUrl).toBe(url);
    expect(problems({ ...base, OPS_CONSOLE_TRACE_URL: 'https://tempo.example/trace/' })[0]).toMatch(
      /^OPS_CONSOLE_TRACE_URL: /,
    );
    expect(problems({ ...base, OPS_CONSOLE_TRACE_URL: 'javascript:alert(1)//{traceId}' })[0]).toMatch(
      /^OPS_CONSOLE_TRACE_URL: /,
    );
  });

  it('needs the identity provider unless the development login is switched on explicitly', () => {
    const { OPS_CONSOLE_OIDC_ISSUER: _, ...noIssuer } = base;
    expect(problems(noIssuer)[0]).toMatch(/^OPS_CONSOLE_OIDC_ISSUER: required/);
    const dev = loadOpsConsoleConfig({ ...noIssuer, OPS_CONSOLE_DEV_LOGIN: 'true' });
    expect(dev.auth).toMatchObject({ devLogin: true, oidc: undefined });
    expect(
      problems({ ...base, OPS_CONSOLE_JWKS: undefined, OPS_CONSOLE_JWKS_FILE: '/nowhere/jwks.json' }),
    ).toEqual(['OPS_CONSOLE_JWKS_FILE: cannot read the file (ENOENT)']);
  });

  it('names every missing or bad provider setting, never echoing the client secret', () => {
    expect(
      problems({
        ...base,
        OPS_CONSOLE_OIDC_ISSUER: 'http://login.example.com/realms/toolgate',
        OPS_CONSOLE_OIDC_CLIENT_ID: undefined,
        OPS_CONSOLE_OIDC_CLIENT_SECRET_FILE: '/run/secrets/client',
      }),
    ).toEqual([
      'OPS_CONSOLE_OIDC_ISSUER: expected an https URL (http only on a loopback host)',
      "OPS_CONSOLE_OIDC_CLIENT_ID: required with OPS_CONSOLE_OIDC_ISSUER (the console's client id)",
      'OPS_CONSOLE_OIDC_CLIENT_SECRET / OPS_CONSOLE_OIDC_CLIENT_SECRET_FILE: set exactly one (the client secret, inline or as a file)',
    ]);
    const local = loadOpsConsoleConfig(
      {
        ...base,
        OPS_CONSOLE_OIDC_ISSUER: 'http://127.0.0.1:18180/realms/toolgate',
        OPS_CONSOLE_OIDC_CLIENT_SECRET: undefined,
        OPS_CONSOLE_OIDC_CLIENT_SECRET_FILE: '/run/secrets/client',
        OPS_CONSOLE_OIDC_SCOPES: 'profile email',
      },
      () => 'from-file\n',
    );
    expect(local.auth.oidc).toMatchObject({
      clientSecret: 'from-file',
      scopes: ['openid', 'profile', 'email'],
    });
  });

  it('refuses a short session secret, an origin with a path, and a missing secret, never echoing them', () => {
    expect(problems({ ...base, OPS_CONSOLE_SESSION_SECRET: 'c2hvcnQ=' })[0]).toMatch(
      /^OPS_CONSOLE_SESSION_SECRET: expected base64/,
    );
    expect(problems({ ...base, OPS_CONSOLE_ORIGIN: 'https://ops.example.com/console' })[0]).toMatch(
      /^OPS_CONSOLE_ORIGIN: expected an origin/,
    );
    expect(problems({ ...base, OPS_CONSOLE_SESSION_SECRET: undefined })).toContain(
      'OPS_CONSOLE_SESSION_SECRET: required, but not set',
    );
  });
});

interface Doc {
  kind: string;
  metadata: { name: string };
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  spec?: { template?: { spec: { containers: Container[] } } };
}
interface Container {
  command: string[];
  envFrom: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  env: { name: string; value?: string }[];
  volumeMounts: { name: string; mountPath: string }[];
}

describe('deploy/k8s/ops-console.yaml', () => {
  const docs = ['config.yaml', 'ops-console.yaml'].flatMap((f) =>
    parseAllDocuments(readFileSync(new URL(`../../../deploy/k8s/${f}`, import.meta.url), 'utf8')).map(
      (d) => d.toJS() as Doc,
    ),
  );
  const named = (kind: string, name: string) =>
    docs.find((d) => d.kind === kind && d.metadata.name === name)!;

  it("gives the pod an environment the console's own parser accepts, with the identity keys mounted as a file", () => {
    const c = named('Deployment', 'toolgate-ops-console').spec!.template!.spec.containers[0]!;
    expect(c.command).toEqual(['node', 'dist/services/ops-console/main.js']);
    const env: Record<string, string> = {};
    for (const from of c.envFrom) {
      if (from.configMapRef) Object.assign(env, named('ConfigMap', from.configMapRef.name).data);
      if (from.secretRef) Object.assign(env, named('Secret', from.secretRef.name).stringData);
    }
    for (const v of c.env) env[v.name] = v.value ?? 'toolgate-ops-console-7d9f-abcde';
    const mount = c.volumeMounts.find((m) => m.name === 'ops-identity-keys')!.mountPath;
    const jwks = named('ConfigMap', 'toolgate-ops-identity-keys').data!['jwks.json']!;
    const config = loadOpsConsoleConfig(env, (path) => {
      if (path === `${mount}/jwks.json`) return jwks;
      throw Object.assign(new Error('no file'), { code: 'ENOENT' });
    });
    expect(config).toMatchObject({
      consoleId: 'toolgate-ops-console-7d9f-abcde',
      httpPort: 9464,
      port: 8080,
    });
    expect(config.auth.devLogin).toBe(false);
    expect(config.auth.oidc?.redirectUri).toBe('https://ops.example.com/auth/callback');
  });
});
