import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JWK } from 'jose';
import { Registry } from 'prom-client';
import { KafkaEventBus } from '../../../libs/bus/kafka/kafka-event-bus.js';
import type { Principal } from '../../../libs/core/types.js';
import { RegistryEventCodec } from '../../../libs/events/registry-codec.js';
import { topicNames, type TopicNames } from '../../../libs/events/topics.js';
import { startHealthServer, type HealthServer } from '../../../libs/observability/health-server.js';
import { createToolgateMetrics, type ToolgateMetrics } from '../../../libs/observability/metrics.js';
import { createToolgateClient, type ToolgateClient } from '../../../services/sdk/index.js';
import { DATABASE_URL, REDIS_URL, kafkaBrokers, schemaRegistryUrl } from '../../helpers/env.js';
import { createTestKafka } from '../../helpers/kafka.js';
import { uniqueName } from '../../helpers/names.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';
import { createTestRedis } from '../../helpers/redis.js';
import { createTokenIssuer, type TokenIssuer } from '../mcp/token-issuer.js';
import { opsRegistry, OPS_SCOPE } from './ops-catalog.js';
import { freePort } from '../../helpers/ports.js';
import { startService, type ServiceProcess } from './service-process.js';

const CATALOG = fileURLToPath(new URL('ops-catalog.ts', import.meta.url));
const ISSUER = 'ops-agent-backend';
const AUDIENCE = 'ops-executor';
const KID = 'ops-key-1';
/** The MCP gateway signs the principals it maps from access tokens with a key of its own. */
const GATEWAY_KID = 'ops-mcp-gateway-key';
/** Small partition counts: every partition gets traffic, so lag and breakers show quickly. */
const PARTITIONS = {
  CALLS_PARTITIONS: '3',
  RESULTS_PARTITIONS: '2',
  AUDIT_PARTITIONS: '1',
  DLQ_PARTITIONS: '1',
};

/**
 * Two executors, the audit sink, the reconciler and the MCP gateway as processes, and the agent
 * side in this one.
 */
export interface OpsStack {
  readonly prefix: string;
  readonly topics: TopicNames;
  readonly executors: readonly ServiceProcess[];
  readonly auditSink: ServiceProcess;
  readonly reconciler: ServiceProcess;
  /** `toolgate mcp-gateway` as a process: MCP at {@link mcpUrl}, metrics on its httpPort. */
  readonly mcpGateway: ServiceProcess;
  readonly mcpUrl: string;
  /** The authorization server the gateway trusts (its JWKS served over HTTP by this process). */
  readonly mcpTokens: TokenIssuer;
  readonly services: readonly ServiceProcess[];
  /** The agent backend's SDK client (this process). */
  readonly client: ToolgateClient;
  /** The agent backend's metrics: tasks end there, so tool calls per task are counted there. */
  readonly agentMetrics: ToolgateMetrics;
  readonly agentPort: number;
  readonly reader: Principal;
  readonly stranger: Principal;
  close(): Promise<void>;
}

/**
 * Starts the stack on the integration servers, isolated by a unique topic prefix, Postgres schema
 * (search_path in DATABASE_URL) and Redis key prefix. Each service gets the environment its own
 * config.ts reads, plus HTTP_PORT for /metrics, /healthz and /readyz; resolves once every /readyz
 * answers 200.
 */
export async function startOpsStack(): Promise<OpsStack> {
  const prefix = uniqueName('ops');
  const topics = topicNames(prefix);
  const db: TestSchema = await createTestSchema('ops');
  const redisPrefix = `${uniqueName('ops')}:`;
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const gatewayKey = generateKeyPairSync('ed25519');
  const jwks = {
    keys: [
      { ...(publicKey.export({ format: 'jwk' }) as JWK), kid: KID, use: 'sig' },
      { ...(gatewayKey.publicKey.export({ format: 'jwk' }) as JWK), kid: GATEWAY_KID, use: 'sig' },
    ],
  };
  const databaseUrl = `${DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${db.schema}`)}`;
  const common = {
    KAFKA_BROKERS: kafkaBrokers().join(','),
    SCHEMA_REGISTRY_URL: schemaRegistryUrl(),
    DATABASE_URL: databaseUrl,
    TOOLGATE_TOPIC_PREFIX: prefix,
    KAFKA_SESSION_TIMEOUT_MS: '6000',
    KAFKA_REBALANCE_TIMEOUT_MS: '10000',
    KAFKA_HEARTBEAT_MS: '500',
    LOG_LEVEL: 'info',
    ...PARTITIONS,
  };
  const executorEnv = (id: string) => ({
    ...common,
    REDIS_URL,
    REDIS_KEY_PREFIX: redisPrefix,
    TOOLGATE_GROUP_ID: `${prefix}-executors`,
    EXECUTOR_ID: `${prefix}-${id}`,
    PRINCIPAL_JWKS: JSON.stringify(jwks),
    PRINCIPAL_ISSUER: ISSUER,
    PRINCIPAL_AUDIENCE: AUDIENCE,
    TOOLGATE_CATALOG_MODULE: CATALOG,
    // Three failures in a row open a breaker, which then stays open for the rest of the test.
    BREAKER_VOLUME: '3',
    BREAKER_ERROR_PERCENT: '50',
    BREAKER_RESET_MS: '600000',
  });
  const started: ServiceProcess[] = [];
  let closeClient: () => Promise<void> = () => Promise.resolve();
  let agentServer: HealthServer | undefined;
  let jwksServer: Server | undefined;
  const secretsDir = mkdtempSync(join(tmpdir(), 'ops-mcp-'));
  const closeAll = async () => {
    await closeClient().catch(() => undefined);
    await agentServer?.close();
    await Promise.all(started.map((s) => s.stop()));
    await new Promise<void>((resolve) =>
      jwksServer === undefined ? resolve() : jwksServer.close(() => resolve()),
    );
    rmSync(secretsDir, { recursive: true, force: true });
    const kafka = createTestKafka('ops-cleanup');
    const admin = await kafka.admin();
    await admin.deleteTopics({ topics: Object.values(topics), timeout: 10_000 }).catch(() => undefined);
    await kafka.close();
    const redis = createTestRedis('ops-cleanup');
    const keys = await redis.redis.keys(`${redisPrefix}*`);
    if (keys.length > 0) await redis.redis.del(...keys);
    await redis.close();
    await db.drop();
  };
  try {
    // The sink first: the first service to start migrates the schema the others then find ready.
    const auditSink = startService('audit-sink', 'audit-sink', await freePort(), {
      ...common,
      AUDIT_SINK_GROUP_ID: `${prefix}-audit-sink`,
      AUDIT_SINK_ID: `${prefix}-sink`,
    });
    started.push(auditSink);
    await auditSink.ready();
    const executors = [
      startService('executor-1', 'executor', await freePort(), executorEnv('executor-1')),
      startService('executor-2', 'executor', await freePort(), executorEnv('executor-2')),
    ];
    started.push(...executors);
    const reconciler = startService('reconciler', 'reconciler', await freePort(), {
      ...common,
      REDIS_URL,
      REDIS_KEY_PREFIX: redisPrefix,
      RECONCILER_GROUP_ID: `${prefix}-reconcilers`,
      RECONCILER_ID: `${prefix}-reconciler`,
      TOOLGATE_CATALOG_MODULE: CATALOG,
      // Cases stay open for the whole test: the first status check is ten minutes away.
      CHECK_SCHEDULE_MS: '600000',
    });
    started.push(reconciler);

    // The MCP gateway: an OAuth resource server trusting a stand-in authorization server whose JWKS
    // it fetches over HTTP, mapping each token to a principal it signs with its own key.
    const mcpPort = await freePort();
    const mcpUrl = `http://127.0.0.1:${mcpPort}/mcp`;
    const mcpTokens = createTokenIssuer(mcpUrl);
    const jwksBody = JSON.stringify(mcpTokens.publicJwks);
    const jwksHttp = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(jwksBody);
    });
    jwksServer = jwksHttp;
    await new Promise<void>((resolve) => jwksHttp.listen(0, '127.0.0.1', () => resolve()));
    const jwksPort = (jwksHttp.address() as { port: number }).port;
    const secretFile = join(secretsDir, 'confirmation.secret');
    writeFileSync(secretFile, randomBytes(32), { mode: 0o600 });
    const signingKeyFile = join(secretsDir, 'principal-signing-key.pem');
    writeFileSync(signingKeyFile, gatewayKey.privateKey.export({ format: 'pem', type: 'pkcs8' }), {
      mode: 0o600,
    });
    const mcpGateway = startService('mcp-gateway', 'mcp-gateway', await freePort(), {
      ...common,
      REDIS_URL,
      REDIS_KEY_PREFIX: redisPrefix,
      TOOLGATE_CATALOG_MODULE: CATALOG,
      MCP_RESOURCE_URL: mcpUrl,
      MCP_LISTEN_HOST: '127.0.0.1',
      MCP_LISTEN_PORT: String(mcpPort),
      MCP_OAUTH_ISSUER: mcpTokens.issuer,
      MCP_OAUTH_JWKS_URL: `http://127.0.0.1:${jwksPort}/jwks.json`,
      MCP_TENANT: 't1',
      MCP_CALL_TIMEOUT_MS: '20000',
      MCP_CONFIRMATION_SECRET_FILE: secretFile,
      PRINCIPAL_SIGNING_KEY_FILE: signingKeyFile,
      PRINCIPAL_SIGNING_KID: GATEWAY_KID,
      PRINCIPAL_ISSUER: ISSUER,
      PRINCIPAL_AUDIENCE: AUDIENCE,
      // The agent below answers on reply slot 0.
      MCP_REPLY_SLOT: '1',
      MCP_GATEWAY_ID: `${prefix}-mcp-gateway`,
    });
    started.push(mcpGateway);
    await Promise.all([...executors, reconciler, mcpGateway].map((s) => s.ready()));

    const bus = new KafkaEventBus({
      brokers: kafkaBrokers(),
      clientId: `${prefix}-agent`,
      logLevel: 'error',
      sessionTimeoutMs: 6_000,
      heartbeatIntervalMs: 500,
      maxWaitTimeMs: 100,
    });
    const codec = await RegistryEventCodec.create({ url: schemaRegistryUrl(), topics });
    const client = createToolgateClient({
      publisher: bus,
      subscriber: bus,
      codec,
      topics,
      instanceId: `${prefix}-agent`,
      replySlot: 0,
      signing: { key: privateKey, issuer: ISSUER, audience: AUDIENCE, kid: KID },
      tools: opsRegistry(),
      defaultTimeoutMs: 20_000,
    });
    closeClient = async () => {
      await client.stop();
      await bus.close();
    };
    await client.start();
    const registry = new Registry();
    const agentMetrics = createToolgateMetrics(registry, { isKnownTool: () => false });
    agentServer = await startHealthServer({
      port: 0,
      host: '127.0.0.1',
      registry,
      readiness: () => Promise.resolve({ ready: true, checks: {} }),
    });
    const principal = (id: string, scopes: string[]): Principal => ({
      id: `${prefix}:${id}`,
      tenant: 't1',
      kind: 'agent',
      roles: [],
      scopes,
    });
    return {
      prefix,
      topics,
      executors,
      auditSink,
      reconciler,
      mcpGateway,
      mcpUrl,
      mcpTokens,
      services: started,
      client,
      agentMetrics,
      agentPort: agentServer.port,
      reader: principal('reader', [OPS_SCOPE]),
      stranger: principal('stranger', []),
      close: closeAll,
    };
  } catch (err) {
    await closeAll().catch(() => undefined);
    throw err;
  }
}
