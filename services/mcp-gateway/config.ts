import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { DEFAULT_PRINCIPAL_AUDIENCE, DEFAULT_PRINCIPAL_ISSUER } from '../../libs/auth/principal-defaults.js';
import {
  configErrorClass,
  defaultInstanceId,
  nonEmpty,
  PARTITION_ENV,
  positiveInt,
  REDIS_URL,
  SERVICE_ENV,
  serviceSettings,
  type Environment,
  type ServiceSettings,
} from '../../libs/runtime/env.js';
import { MIN_CONFIRMATION_SECRET_BYTES } from './confirmation.js';
import { DEFAULT_TASK_TTL_MS, DEFAULT_TASK_WAIT_MS } from './tasks.js';
import { DEFAULT_CALL_DEADLINE_MS } from './tool-call.js';

const list = z
  .string()
  .transform((v) => v.split(/[\s,]+/).filter((s) => s !== ''))
  .pipe(z.array(z.string()).min(1));

/**
 * The gateway's environment. Besides the variables every service shares: where it listens and
 * what public URL it is (the token audience), the authorization server it trusts, how claims map
 * to a principal, the key it signs principal assertions with (the executors' PRINCIPAL_JWKS must
 * list its public half), the confirmation secret, and Redis for used confirmations.
 */
const EnvSchema = z.object({
  ...SERVICE_ENV,
  CALLS_PARTITIONS: PARTITION_ENV.CALLS_PARTITIONS,
  RESULTS_PARTITIONS: PARTITION_ENV.RESULTS_PARTITIONS,
  AUDIT_PARTITIONS: PARTITION_ENV.AUDIT_PARTITIONS,
  REDIS_URL,
  REDIS_KEY_PREFIX: z.string().default('toolgate:'),
  TOOLGATE_CATALOG_MODULE: nonEmpty.optional(),
  /** The public URL of the MCP endpoint, e.g. https://tools.example.com/mcp (RFC 8707 resource). */
  MCP_RESOURCE_URL: z.url(),
  MCP_LISTEN_HOST: nonEmpty.default('0.0.0.0'),
  MCP_LISTEN_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /** Host names the endpoint answers to (DNS-rebinding guard); default: the resource URL's host. */
  MCP_ALLOWED_HOSTS: list.optional(),
  MCP_OAUTH_ISSUER: nonEmpty,
  MCP_OAUTH_JWKS_URL: z.url(),
  MCP_REQUIRED_SCOPES: list.default(['mcp:tools']),
  /** Claim naming the tenant; or MCP_TENANT fixes one tenant for every caller. */
  MCP_TENANT_CLAIM: nonEmpty.default('tenant'),
  MCP_TENANT: nonEmpty.optional(),
  MCP_ROLES_CLAIM: nonEmpty.default('roles'),
  /** Only token scopes with this prefix become toolgate scopes (prefix stripped); default all. */
  MCP_SCOPE_PREFIX: z.string().default(''),
  /** How long a tools/call waits for its result before answering "outcome unknown". */
  MCP_CALL_TIMEOUT_MS: positiveInt.default(30_000),
  /** How long after publishing executors may still start or run a call (its deadline); never below the wait. */
  MCP_CALL_DEADLINE_MS: positiveInt.default(DEFAULT_CALL_DEADLINE_MS),
  MCP_CONFIRMATION_SECRET_FILE: nonEmpty,
  MCP_CONFIRMATION_TTL_MS: positiveInt.default(300_000),
  /** How long an MCP task (a call answered with a handle) is kept; default one day. */
  MCP_TASK_TTL_MS: positiveInt.default(DEFAULT_TASK_TTL_MS),
  /** How long the gateway awaits the result of a call it answered with a task; default ten minutes. */
  MCP_TASK_WAIT_MS: positiveInt.default(DEFAULT_TASK_WAIT_MS),
  PRINCIPAL_SIGNING_KEY_FILE: nonEmpty,
  PRINCIPAL_SIGNING_KID: nonEmpty.optional(),
  PRINCIPAL_ISSUER: nonEmpty.default(DEFAULT_PRINCIPAL_ISSUER),
  PRINCIPAL_AUDIENCE: nonEmpty.default(DEFAULT_PRINCIPAL_AUDIENCE),
  /** This instance's reply partition of the results topic: unique per running gateway. */
  MCP_REPLY_SLOT: z.coerce.number().int().min(0).default(0),
  MCP_GATEWAY_ID: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,200}$/)
    .optional(),
});

/** The gateway's configuration, parsed once from the environment by {@link loadMcpGatewayConfig}. */
export interface McpGatewayConfig extends ServiceSettings {
  readonly partitions: { readonly calls: number; readonly results: number; readonly audit: number };
  readonly redisUrl: string;
  readonly redisKeyPrefix: string;
  readonly catalogModule: string | undefined;
  readonly resourceUrl: string;
  readonly listen: { readonly host: string; readonly port: number };
  readonly allowedHosts: readonly string[];
  readonly oauth: {
    readonly issuer: string;
    readonly jwksUrl: string;
    readonly requiredScopes: readonly string[];
  };
  readonly mapping: {
    readonly tenantClaim: string;
    readonly tenant: string | undefined;
    readonly rolesClaim: string;
    readonly scopePrefix: string;
  };
  readonly callTimeoutMs: number;
  readonly callDeadlineMs: number;
  readonly confirmationSecret: Buffer;
  readonly confirmationTtlMs: number;
  readonly tasks: { readonly ttlMs: number; readonly waitMs: number };
  readonly signing: {
    readonly keyPem: string;
    readonly kid: string | undefined;
    readonly issuer: string;
    readonly audience: string;
  };
  readonly replySlot: number;
  readonly gatewayId: string;
}

/** Thrown with every problem of the environment listed, one per line, by variable name. */
export class McpGatewayConfigError extends configErrorClass('mcp-gateway', 'McpGatewayConfigError') {}

/**
 * Parses the gateway's environment once; reads the two files it names. Throws
 * {@link McpGatewayConfigError} naming every bad or missing variable (and an unreadable or short
 * secret file); never echoes a value.
 */
export function loadMcpGatewayConfig(
  env: Environment = process.env,
  readFile: (path: string) => Buffer = (path) => readFileSync(path),
): McpGatewayConfig {
  const e = McpGatewayConfigError.parse(EnvSchema, env);
  const read = (name: string, path: string): Buffer => {
    try {
      return readFile(path);
    } catch {
      throw new McpGatewayConfigError([`${name}: cannot read the file it names`]);
    }
  };
  const secret = read('MCP_CONFIRMATION_SECRET_FILE', e.MCP_CONFIRMATION_SECRET_FILE);
  if (secret.byteLength < MIN_CONFIRMATION_SECRET_BYTES) {
    throw new McpGatewayConfigError([
      `MCP_CONFIRMATION_SECRET_FILE: the secret must be at least ${MIN_CONFIRMATION_SECRET_BYTES} bytes`,
    ]);
  }
  return {
    ...serviceSettings(e),
    partitions: { calls: e.CALLS_PARTITIONS, results: e.RESULTS_PARTITIONS, audit: e.AUDIT_PARTITIONS },
    redisUrl: e.REDIS_URL,
    redisKeyPrefix: e.REDIS_KEY_PREFIX,
    catalogModule: e.TOOLGATE_CATALOG_MODULE,
    resourceUrl: e.MCP_RESOURCE_URL,
    listen: { host: e.MCP_LISTEN_HOST, port: e.MCP_LISTEN_PORT },
    allowedHosts: e.MCP_ALLOWED_HOSTS ?? [new URL(e.MCP_RESOURCE_URL).hostname],
    oauth: {
      issuer: e.MCP_OAUTH_ISSUER,
      jwksUrl: e.MCP_OAUTH_JWKS_URL,
      requiredScopes: e.MCP_REQUIRED_SCOPES,
    },
    mapping: {
      tenantClaim: e.MCP_TENANT_CLAIM,
      tenant: e.MCP_TENANT,
      rolesClaim: e.MCP_ROLES_CLAIM,
      scopePrefix: e.MCP_SCOPE_PREFIX,
    },
    callTimeoutMs: e.MCP_CALL_TIMEOUT_MS,
    callDeadlineMs: e.MCP_CALL_DEADLINE_MS,
    confirmationSecret: secret,
    confirmationTtlMs: e.MCP_CONFIRMATION_TTL_MS,
    tasks: { ttlMs: e.MCP_TASK_TTL_MS, waitMs: e.MCP_TASK_WAIT_MS },
    signing: {
      keyPem: read('PRINCIPAL_SIGNING_KEY_FILE', e.PRINCIPAL_SIGNING_KEY_FILE).toString('utf8'),
      kid: e.PRINCIPAL_SIGNING_KID,
      issuer: e.PRINCIPAL_ISSUER,
      audience: e.PRINCIPAL_AUDIENCE,
    },
    replySlot: e.MCP_REPLY_SLOT,
    gatewayId: e.MCP_GATEWAY_ID ?? defaultInstanceId('mcp-gateway').replace(/[^A-Za-z0-9._-]/g, '-'),
  };
}
