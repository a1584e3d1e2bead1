import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listAuditChains } from '../../libs/adapters/postgres/audit-chains.js';
import { PostgresAuditStore } from '../../libs/adapters/postgres/audit-store.js';
import { PostgresCaseStore } from '../../libs/adapters/postgres/case-store.js';
import { PostgresApprovalStore } from '../../libs/adapters/postgres/approval-store.js';
import { kafkaClient, openSettlementClients } from '../../libs/runtime/clients.js';
import {
  createConfiguredService,
  type CatalogServiceOptions,
  type Service,
  type ServiceMain,
} from '../../libs/runtime/service.js';
import { createOperations } from '../../libs/reconcile/operations.js';
import { kafkaOriginalCalls } from '../../libs/reconcile/original-call.js';
import { DEFAULT_BACKOFF } from '../../libs/core/backoff.js';
import { ApprovalsQueue } from './approvals.js';
import { loadOpsConsoleConfig, type OpsConsoleConfig } from './config.js';
import { createConsoleHandler } from './console-app.js';
import { createConsoleMetrics } from './console-metrics.js';
import { RedisSessionStore } from '../../libs/adapters/redis/session-store.js';
import type { Clock } from '../../libs/core/clock.js';
import { OidcSignIn } from './oidc.js';
import { OperatorSessions } from './session.js';
import { OperatorTokens } from './sign-in.js';

/** What a caller may supply instead of what the configuration names. */
export interface OpsConsoleServiceOptions extends CatalogServiceOptions {
  /** Called once the console's pages listen, with their bound port (the chosen one for port 0). */
  readonly onListening?: (port: number) => void;
  /** The clock of the console's pages and sessions (idle timeout, lifetime, refresh); default: the system's. */
  readonly clock?: Clock;
}

/**
 * The ops console process from its configuration (nothing opens before `start()`): Postgres (cases,
 * the audit log, the approval requests; migrated at start), the executors' Redis
 * idempotency store, Kafka and the schema registry (audit records, results and re-submissions go
 * out through the reconciler's delivery path; re-submissions read the original call back from the
 * calls topic), and the executors' tool catalog (a redrive applies the tools' retry safety).
 * The pages listen on OPS_CONSOLE_PORT; /metrics, /healthz and /readyz stay on HTTP_PORT, with
 * "Postgres answers" and "Redis answers" in /readyz. The console creates no topic: the executors do.
 */
export function createOpsConsoleService(
  config: OpsConsoleConfig,
  options: OpsConsoleServiceOptions = {},
): Service {
  return createConfiguredService('ops-console', config, 'consoleId', options, async (context) => {
    const { topics } = context;
    const clock = options.clock ?? context.clock;
    const logger = context.logger.child({ component: 'ops-console' });
    // The console creates no topic: the executors do.
    const { pool, redis, idempotency, bus, codec, catalog } = await openSettlementClients(
      context,
      config,
      [],
      options.catalog,
    );
    const delivery = {
      publisher: bus,
      codec,
      topics,
      idempotency,
      clock,
      logger,
      backoff: DEFAULT_BACKOFF,
      replyTopics: { [topics.results]: config.partitions.results },
      resultTtlMs: config.resultTtlMs,
    };
    const cases = new PostgresCaseStore(pool, clock);
    const operations = createOperations({
      ...delivery,
      cases,
      tools: catalog.registry,
      originalCalls: kafkaOriginalCalls({
        kafka: kafkaClient(context, 'calls-reader'),
        codec,
        groupPrefix: `${config.consoleId}-calls`,
      }),
    });
    const audit = new PostgresAuditStore(pool);
    const oidc = config.auth.oidc === undefined ? undefined : new OidcSignIn(config.auth.oidc, clock);
    // Sessions live in the executors' Redis under this deployment's key prefix: every replica sees
    // every session, and a signed-out one is gone for all of them.
    const sessions = new OperatorSessions({
      store: new RedisSessionStore(redis, { keyPrefix: `${config.redisKeyPrefix}ops-console:session:` }),
      secret: config.auth.sessionSecret,
      clock,
      idleMs: config.auth.sessionIdleSec * 1000,
      lifetimeMs: config.auth.sessionTtlSec * 1000,
      refresh: oidc === undefined ? undefined : (token) => oidc.refresh(token),
      onRefreshFailed: (operator, err) =>
        logger.info(
          { operator, reason: err instanceof Error ? err.message.slice(0, 200) : 'unknown' },
          'ops console: session ended, the identity provider refused the refresh',
        ),
    });
    const handler = createConsoleHandler({
      operations,
      cases,
      traceUrl: config.traceUrl,
      tools: catalog.registry,
      audit,
      chains: () => listAuditChains(pool),
      approvals: new ApprovalsQueue({
        approvals: new PostgresApprovalStore(pool, clock),
        tools: catalog.registry,
        clock,
        delivery,
      }),
      sessions,
      oidc,
      pendingSignIns: new RedisSessionStore(redis, {
        keyPrefix: `${config.redisKeyPrefix}ops-console:sign-in:`,
      }),
      tokens:
        config.auth.jwks === undefined
          ? undefined
          : new OperatorTokens({
              jwks: config.auth.jwks,
              issuer: config.auth.issuer,
              audience: config.auth.audience,
            }),
      devLogin: config.auth.devLogin,
      origin: config.origin,
      clock,
      logger,
      delivery,
      metrics: createConsoleMetrics(context.registry),
    });
    if (config.auth.devLogin)
      logger.warn({}, 'the development login is enabled (OPS_CONSOLE_DEV_LOGIN=true)');
    let server: Server | undefined;
    return {
      async start() {
        server = createServer((req, res) => void handler(req, res));
        server.keepAliveTimeout = 5000;
        await new Promise<void>((resolve, reject) => {
          server!.once('error', reject);
          server!.listen(config.port, config.host, () => {
            server!.off('error', reject);
            resolve();
          });
        });
        const { port } = server.address() as AddressInfo;
        logger.info({ port, origin: config.origin }, 'ops console listening');
        options.onListening?.(port);
      },
      async stop() {
        const s = server;
        if (s === undefined) return;
        await new Promise<void>((resolve) => {
          s.close(() => resolve());
          s.closeAllConnections();
        });
      },
    };
  });
}

/** `toolgate ops-console`, and main.ts: the ops-console process from the environment. */
export const OPS_CONSOLE_MAIN: ServiceMain<OpsConsoleConfig> = {
  command: 'ops-console',
  summary: 'run the ops console: cases, dead letters, approvals and audit in the browser',
  serviceName: 'toolgate-ops-console',
  load: () => loadOpsConsoleConfig(),
  catalogModule: (config) => config.catalogModule,
  create: (config, catalog) => createOpsConsoleService(config, { catalog }),
};
