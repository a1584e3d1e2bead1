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
  /** base64 of at least 32 random bytes; signs sessions and CSRF tokens (the same on every replica). */
  OPS_CONSOLE_SESSION_SECRET: nonEmpty,
  OPS_CONSOLE_SESSION_TTL_SEC: positiveInt.max(7 * 24 * 3600).default(8 * 3600),
  /** "true": a sign-in form that takes a name and a role without any token. Development only. */
  OPS_CONSOLE_DEV_LOGIN: z.enum(['true', 'false']).default('false'),
  /** A trace viewer's URL with `{traceId}` where the trace id goes, e.g. https://tempo.example/trace/{traceId}. */
  OPS_CONSOLE_TRACE_URL: z
    .url({ protocol: /^https?$/ })
    .refine((v) => v.includes('{traceId}'), 'expected an http(s) URL containing {traceId}')
    .optional(),
});

type Env = z.infer<typeof EnvSchema>;

/** How operators sign in. */
export interface OperatorAuthConfig {
  /** The identity provider's public keys; undefined only with the development login. */
  readonly jwks: JSONWebKeySet | undefined;
  readonly issuer: string;
  readonly audience: string;
  /** Signs session cookies and CSRF tokens. A secret: never logged or shown. */
  readonly sessionSecret: Buffer;
  readonly sessionTtlSec: number;
  /** The static development login (any name, any role, no token): only when explicitly enabled. */
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
      jwks: operatorKeys(e, readFile, devLogin),
      issuer: e.OPS_CONSOLE_ISSUER,
      audience: e.OPS_CONSOLE_AUDIENCE,
      sessionSecret: sessionSecret(e.OPS_CONSOLE_SESSION_SECRET),
      sessionTtlSec: e.OPS_CONSOLE_SESSION_TTL_SEC,
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

/** The identity provider's JWKS; neither variable set is allowed only with the development login. */
function operatorKeys(
  e: Env,
  readFile: (path: string) => string,
  devLogin: boolean,
): JSONWebKeySet | undefined {
  const jwks = jwksFromEnv(
    {
      inline: ['OPS_CONSOLE_JWKS', e.OPS_CONSOLE_JWKS],
      file: ['OPS_CONSOLE_JWKS_FILE', e.OPS_CONSOLE_JWKS_FILE],
    },
    readFile,
    (problems) => new OpsConsoleConfigError(problems),
  );
  if (jwks === undefined && !devLogin) {
    throw new OpsConsoleConfigError([
      'OPS_CONSOLE_JWKS / OPS_CONSOLE_JWKS_FILE: required (the identity provider keys operators sign in with), unless OPS_CONSOLE_DEV_LOGIN=true',
    ]);
  }
  return jwks;
}
