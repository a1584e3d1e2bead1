import type { JSONWebKeySet } from 'jose';
import { z } from 'zod';
import {
  configErrorClass,
  defaultInstanceId,
  EXECUTION_ENV,
  executionSettings,
  jwksFromEnv,
  nonEmpty,
  POSTGRES_ENV,
  positiveInt,
  postgresSettings,
  readTextFile,
  type Environment,
  type ExecutionSettings,
  type PostgresSettings,
} from '../../libs/runtime/env.js';

/** Issuer the console expects on operators' sign-in tokens unless OPS_CONSOLE_ISSUER says otherwise. */
export const DEFAULT_OPERATOR_ISSUER = 'toolgate-identity';
/** Audience the console expects on operators' sign-in tokens unless OPS_CONSOLE_AUDIENCE says otherwise. */
export const DEFAULT_OPERATOR_AUDIENCE = 'toolgate-ops-console';

/** Claim of the ID token that names the operator unless OPS_CONSOLE_OIDC_OPERATOR_CLAIM says otherwise. */
export const DEFAULT_OPERATOR_CLAIM = 'preferred_username';
/** Claim that lists the operator's roles unless OPS_CONSOLE_OIDC_ROLES_CLAIM says otherwise. */
export const DEFAULT_ROLES_CLAIM = 'roles';
/** Claim that lists the operator's tenants (`*` = all) unless OPS_CONSOLE_OIDC_TENANTS_CLAIM says otherwise. */
export const DEFAULT_TENANTS_CLAIM = 'tenants';
/** Scopes asked for unless OPS_CONSOLE_OIDC_SCOPES says otherwise (`openid` is always included). */
export const DEFAULT_OIDC_SCOPES = 'openid profile';
/** Path of the console's sign-in callback; the redirect URI is the origin plus this path. */
export const OIDC_CALLBACK_PATH = '/auth/callback';

/** The shortest session secret accepted: 32 bytes, as for the preview key. */
const MIN_SESSION_SECRET_BYTES = 32;

/**
 * The environment the console reads. The bus, topic prefix, partition counts, Redis key prefix,
 * result TTL and catalog module use the executor's names and defaults (libs/runtime/env.ts):
 * the console's actions settle the executors' idempotency records and publish on their topics
 * through the reconciler's operations, so all must agree.
 */
const EnvSchema = z.object({
  ...EXECUTION_ENV,
  ...POSTGRES_ENV,
  /** `producerId` of this instance's log lines; unique per instance. */
  OPS_CONSOLE_ID: nonEmpty.max(200).optional(),
  /** Port of the console's pages (the health endpoint keeps HTTP_PORT). */
  OPS_CONSOLE_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  OPS_CONSOLE_HOST: nonEmpty.default('0.0.0.0'),
  /** The origin browsers reach the console at (scheme://host[:port]); state-changing requests must come from it. */
  OPS_CONSOLE_ORIGIN: z.url().transform((v, ctx) => {
    const url = new URL(v);
    if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin !== v.replace(/\/$/, '')) {
      ctx.addIssue({ code: 'custom', message: 'expected an origin: http(s)://host[:port], no path' });
      return z.NEVER;
    }
    return url.origin;
  }),
  /** The identity provider's public keys (a JWKS), inline or as a file. Exactly one of the two. */
  OPS_CONSOLE_JWKS: z.string().optional(),
  OPS_CONSOLE_JWKS_FILE: z.string().optional(),
  OPS_CONSOLE_ISSUER: nonEmpty.default(DEFAULT_OPERATOR_ISSUER),
  OPS_CONSOLE_AUDIENCE: nonEmpty.default(DEFAULT_OPERATOR_AUDIENCE),
  /** The OpenID Connect provider operators sign in at (its issuer URL; discovery is read from it). */
  OPS_CONSOLE_OIDC_ISSUER: z.url().optional(),
  OPS_CONSOLE_OIDC_CLIENT_ID: nonEmpty.max(500).optional(),
  /** The console's client secret at the provider, inline or as a file. Exactly one of the two. */
  OPS_CONSOLE_OIDC_CLIENT_SECRET: nonEmpty.optional(),
  OPS_CONSOLE_OIDC_CLIENT_SECRET_FILE: nonEmpty.optional(),
  /** Space-separated scopes; `openid` is added when missing. */
  OPS_CONSOLE_OIDC_SCOPES: nonEmpty.default(DEFAULT_OIDC_SCOPES),
  OPS_CONSOLE_OIDC_OPERATOR_CLAIM: nonEmpty.max(200).default(DEFAULT_OPERATOR_CLAIM),
  OPS_CONSOLE_OIDC_ROLES_CLAIM: nonEmpty.max(200).default(DEFAULT_ROLES_CLAIM),
  OPS_CONSOLE_OIDC_TENANTS_CLAIM: nonEmpty.max(200).default(DEFAULT_TENANTS_CLAIM),
  /** base64 of at least 32 random bytes; keys CSRF tokens and seals refresh tokens (the same on every replica). */
  OPS_CONSOLE_SESSION_SECRET: nonEmpty,
  /** Absolute lifetime of a session: it ends this long after sign-in, whatever happens. */
  OPS_CONSOLE_SESSION_TTL_SEC: positiveInt.max(7 * 24 * 3600).default(8 * 3600),
  /** Idle timeout: a session not used for this long ends. */
  OPS_CONSOLE_SESSION_IDLE_SEC: positiveInt.max(7 * 24 * 3600).default(30 * 60),
  /** "true": a sign-in form that takes a name and a role without any token. Development only. */
  OPS_CONSOLE_DEV_LOGIN: z.enum(['true', 'false']).default('false'),
  /** A trace viewer's URL with `{traceId}` where the trace id goes, e.g. https://tempo.example/trace/{traceId}. */
  OPS_CONSOLE_TRACE_URL: z
    .url({ protocol: /^https?$/ })
    .refine((v) => v.includes('{traceId}'), 'expected an http(s) URL containing {traceId}')
    .optional(),
});

type Env = z.infer<typeof EnvSchema>;

/** Sign-in through an OpenID Connect provider (authorization code flow with PKCE). */
export interface OidcConfig {
  readonly issuer: string;
  readonly clientId: string;
  /** A secret: never logged or shown. */
  readonly clientSecret: string;
  /** `<origin>/auth/callback`: register exactly this at the provider. */
  readonly redirectUri: string;
  readonly scopes: readonly string[];
  /** The claim names the operator, their roles and their tenants are read from. */
  readonly claims: { readonly operator: string; readonly roles: string; readonly tenants: string };
}

/** How operators sign in. */
export interface OperatorAuthConfig {
  /** The OpenID Connect provider; undefined only with the development login. */
  readonly oidc: OidcConfig | undefined;
  /** Public keys that verify bearer tokens (scripts) and, in development, pasted tokens; optional. */
  readonly jwks: JSONWebKeySet | undefined;
  readonly issuer: string;
  readonly audience: string;
  /** Keys CSRF tokens and seals refresh tokens. A secret: never logged or shown. */
  readonly sessionSecret: Buffer;
  /** Absolute session lifetime. */
  readonly sessionTtlSec: number;
  /** Idle timeout. */
  readonly sessionIdleSec: number;
  /** The development sign-ins (name and role without any token; a pasted token): only when explicitly enabled. */
  readonly devLogin: boolean;
}

/** The console's configuration, parsed once from the environment by {@link loadOpsConsoleConfig}. */
export interface OpsConsoleConfig extends ExecutionSettings, PostgresSettings {
  readonly consoleId: string;
  readonly port: number;
  readonly host: string;
  /** The public origin, e.g. `https://ops.example.com`; also decides whether cookies are `Secure`. */
  readonly origin: string;
  readonly auth: OperatorAuthConfig;
  /** OPS_CONSOLE_TRACE_URL: trace ids link there (`{traceId}` replaced, URL-encoded); undefined: no link. */
  readonly traceUrl: string | undefined;
}

/** Thrown with every problem of the environment listed, one per line, by variable name. */
export class OpsConsoleConfigError extends configErrorClass('ops-console', 'OpsConsoleConfigError') {}

/**
 * Parses the console's environment once. `readFile` reads OPS_CONSOLE_JWKS_FILE (injected for
 * tests). Throws {@link OpsConsoleConfigError} naming every bad or missing variable; never echoes a
 * value (URLs may carry passwords, and the session secret is one).
 */
export function loadOpsConsoleConfig(
  env: Environment = process.env,
  readFile: (path: string) => string = readTextFile,
): OpsConsoleConfig {
  const e = OpsConsoleConfigError.parse(EnvSchema, env);
  const devLogin = e.OPS_CONSOLE_DEV_LOGIN === 'true';
  return {
    ...executionSettings(e),
    ...postgresSettings(e),
    consoleId: e.OPS_CONSOLE_ID ?? defaultInstanceId('ops-console'),
    port: e.OPS_CONSOLE_PORT,
    host: e.OPS_CONSOLE_HOST,
    origin: e.OPS_CONSOLE_ORIGIN,
    traceUrl: e.OPS_CONSOLE_TRACE_URL,
    auth: {
      oidc: oidcConfig(e, readFile, devLogin),
      jwks: operatorKeys(e, readFile),
      issuer: e.OPS_CONSOLE_ISSUER,
      audience: e.OPS_CONSOLE_AUDIENCE,
      sessionSecret: sessionSecret(e.OPS_CONSOLE_SESSION_SECRET),
      sessionTtlSec: e.OPS_CONSOLE_SESSION_TTL_SEC,
      sessionIdleSec: e.OPS_CONSOLE_SESSION_IDLE_SEC,
      devLogin,
    },
  };
}

function sessionSecret(text: string): Buffer {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length < MIN_SESSION_SECRET_BYTES) {
    throw new OpsConsoleConfigError([
      `OPS_CONSOLE_SESSION_SECRET: expected base64 of at least ${MIN_SESSION_SECRET_BYTES} random bytes (openssl rand -base64 32)`,
    ]);
  }
  return bytes;
}

/** Bearer-token keys: optional (scripts that call the console with a token need them). */
function operatorKeys(e: Env, readFile: (path: string) => string): JSONWebKeySet | undefined {
  return jwksFromEnv(
    {
      inline: ['OPS_CONSOLE_JWKS', e.OPS_CONSOLE_JWKS],
      file: ['OPS_CONSOLE_JWKS_FILE', e.OPS_CONSOLE_JWKS_FILE],
    },
    readFile,
    (problems) => new OpsConsoleConfigError(problems),
  );
}

/**
 * The OpenID Connect settings. The issuer is required unless OPS_CONSOLE_DEV_LOGIN=true; with an
 * issuer, the client id and exactly one of the secret variables are required. The issuer must be
 * https, except on a loopback host (a provider on the same machine, as in development).
 */
function oidcConfig(e: Env, readFile: (path: string) => string, devLogin: boolean): OidcConfig | undefined {
  const issuer = e.OPS_CONSOLE_OIDC_ISSUER;
  if (issuer === undefined) {
    if (devLogin) return undefined;
    throw new OpsConsoleConfigError([
      'OPS_CONSOLE_OIDC_ISSUER: required (the OpenID Connect provider operators sign in at), unless OPS_CONSOLE_DEV_LOGIN=true',
    ]);
  }
  const problems: string[] = [];
  const url = new URL(issuer);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url.hostname)))
    problems.push('OPS_CONSOLE_OIDC_ISSUER: expected an https URL (http only on a loopback host)');
  if (e.OPS_CONSOLE_OIDC_CLIENT_ID === undefined)
    problems.push(
      "OPS_CONSOLE_OIDC_CLIENT_ID: required with OPS_CONSOLE_OIDC_ISSUER (the console's client id)",
    );
  const inline = e.OPS_CONSOLE_OIDC_CLIENT_SECRET;
  const file = e.OPS_CONSOLE_OIDC_CLIENT_SECRET_FILE;
  let secret: string | undefined;
  if ((inline === undefined) === (file === undefined)) {
    problems.push(
      'OPS_CONSOLE_OIDC_CLIENT_SECRET / OPS_CONSOLE_OIDC_CLIENT_SECRET_FILE: set exactly one (the client secret, inline or as a file)',
    );
  } else if (inline !== undefined) {
    secret = inline;
  } else {
    try {
      secret = readFile(file!).trim();
    } catch {
      problems.push('OPS_CONSOLE_OIDC_CLIENT_SECRET_FILE: cannot read the file');
    }
    if (secret === '') problems.push('OPS_CONSOLE_OIDC_CLIENT_SECRET_FILE: the file is empty');
  }
  if (problems.length > 0) throw new OpsConsoleConfigError(problems);
  const scopes = e.OPS_CONSOLE_OIDC_SCOPES.split(/\s+/).filter(Boolean);
  return {
    issuer,
    clientId: e.OPS_CONSOLE_OIDC_CLIENT_ID!,
    clientSecret: secret!,
    redirectUri: `${e.OPS_CONSOLE_ORIGIN}${OIDC_CALLBACK_PATH}`,
    scopes: scopes.includes('openid') ? scopes : ['openid', ...scopes],
    claims: {
      operator: e.OPS_CONSOLE_OIDC_OPERATOR_CLAIM,
      roles: e.OPS_CONSOLE_OIDC_ROLES_CLAIM,
      tenants: e.OPS_CONSOLE_OIDC_TENANTS_CLAIM,
    },
  };
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
