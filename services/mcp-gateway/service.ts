import { createPrivateKey } from 'node:crypto';
import { RedisSingleUseStore } from '../../libs/adapters/redis/single-use-store.js';
import { busLogger } from '../../libs/observability/bus-logger.js';
import { openCatalog, openKafka, openRedis } from '../../libs/runtime/clients.js';
import {
  createConfiguredService,
  type CatalogServiceOptions,
  type Service,
  type ServiceMain,
} from '../../libs/runtime/service.js';
import { createToolgateClient } from '../sdk/index.js';
import { kafkaAuditPublisher } from './audit-publisher.js';
import { loadMcpGatewayConfig, type McpGatewayConfig } from './config.js';
import { createMcpGateway } from './gateway.js';
import { mcpAuditFailures, mcpMetrics } from './metrics.js';
import { RedisMcpTaskStore } from './task-store.js';

/** What a caller may supply instead of the defaults. */
export type McpGatewayServiceOptions = CatalogServiceOptions;

/**
 * The MCP gateway process from its configuration (nothing opens before `start()`): Kafka (calls
 * out, this instance's reply partition of the results topic in), the schema registry, Redis (used
 * confirmations and MCP tasks, shared by every replica), the executors' tool catalog for metadata only (its tools never run here; a
 * catalog that opens Postgres is refused), the SDK client, and the gateway on MCP_LISTEN_PORT.
 * Every MCP request is counted in the process registry ({@link mcpMetrics}), written as one
 * structured log line (`msg: "mcp request"`) with client name, protocol revision, principal and
 * outcome, and published as one audit record to the audit topic ({@link kafkaAuditPublisher},
 * best-effort; lost ones counted by {@link mcpAuditFailures}) — the token is never among them.
 * /readyz adds Redis to the lifecycle check.
 */
export function createMcpGatewayService(
  config: McpGatewayConfig,
  options: McpGatewayServiceOptions = {},
): Service {
  return createConfiguredService('mcp-gateway', config, 'gatewayId', options, async (context) => {
    const { topics } = context;
    const catalog = await openCatalog(context, {
      postgres: () =>
        Promise.reject(new Error('the MCP gateway reads tool metadata only; it has no database')),
      module: config.catalogModule,
      factory: options.catalog,
    });
    const redis = openRedis(context, config.redisUrl);
    const { bus, codec } = await openKafka(context, [
      { topic: topics.calls, partitions: config.partitions.calls },
      { topic: topics.results, partitions: config.partitions.results },
      { topic: topics.audit, partitions: config.partitions.audit },
    ]);
    const logger = context.logger.child({ component: 'mcp-gateway' });
    const client = createToolgateClient({
      publisher: bus,
      subscriber: bus,
      codec,
      topics,
      instanceId: config.gatewayId,
      replySlot: config.replySlot,
      tools: catalog.registry,
      signing: {
        key: createPrivateKey(config.signing.keyPem),
        issuer: config.signing.issuer,
        audience: config.signing.audience,
        ...(config.signing.kid === undefined ? {} : { kid: config.signing.kid }),
        ttlSeconds: 120,
      },
      defaultTimeoutMs: config.callTimeoutMs,
      logger: busLogger(logger),
      // A result that comes after the gateway stopped waiting settles the call's MCP task.
      onResolution: (resolution) => gateway.onResolution(resolution),
    });
    const metrics = mcpMetrics(context.registry);
    const gateway = createMcpGateway({
      tools: catalog.registry,
      client,
      auth: {
        issuer: config.oauth.issuer,
        resource: config.resourceUrl,
        jwks: new URL(config.oauth.jwksUrl),
        requiredScopes: config.oauth.requiredScopes,
      },
      principal: {
        tenantClaim: config.mapping.tenantClaim,
        ...(config.mapping.tenant === undefined ? {} : { tenant: config.mapping.tenant }),
        rolesClaim: config.mapping.rolesClaim,
        scopePrefix: config.mapping.scopePrefix,
        gatewayScopes: config.oauth.requiredScopes,
      },
      allowedHosts: config.allowedHosts,
      confirmations: {
        secret: config.confirmationSecret,
        store: new RedisSingleUseStore(redis, { keyPrefix: config.redisKeyPrefix }),
        ttlMs: config.confirmationTtlMs,
      },
      callTimeoutMs: config.callTimeoutMs,
      callDeadlineMs: config.callDeadlineMs,
      tasks: {
        store: new RedisMcpTaskStore(redis, { keyPrefix: config.redisKeyPrefix }),
        ttlMs: config.tasks.ttlMs,
        waitMs: config.tasks.waitMs,
      },
      observer: (record) => {
        metrics(record);
        logger.info({ mcp: record }, 'mcp request');
      },
      audit: kafkaAuditPublisher({
        publisher: bus,
        codec,
        topic: topics.audit,
        producerId: config.gatewayId,
        clock: context.clock,
      }),
      onAuditLost: mcpAuditFailures(context.registry),
      logger: busLogger(logger),
    });
    return {
      async start() {
        await client.start();
        await gateway.listen(config.listen.port, config.listen.host);
        logger.info({ url: config.resourceUrl, port: config.listen.port }, 'MCP gateway listening');
      },
      async stop() {
        await gateway.close();
        await client.stop();
      },
    };
  });
}

/** `toolgate mcp-gateway`, and main.ts: the mcp-gateway process from the environment. */
export const MCP_GATEWAY_MAIN: ServiceMain<McpGatewayConfig> = {
  command: 'mcp-gateway',
  summary: 'run the MCP gateway: MCP clients list and call your tools, guarded, through Kafka',
  serviceName: 'toolgate-mcp-gateway',
  load: () => loadMcpGatewayConfig(),
  catalogModule: (config) => config.catalogModule,
  create: (config, catalog) => createMcpGatewayService(config, { catalog }),
};
