import { createPrivateKey, randomBytes, type KeyObject } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { migrate } from '../../../libs/adapters/postgres/migrate.js';
import { PostgresAuditStore } from '../../../libs/adapters/postgres/audit-store.js';
import { PostgresCaseStore } from '../../../libs/adapters/postgres/case-store.js';
import { RedisIdempotencyStore } from '../../../libs/adapters/redis/redis-idempotency-store.js';
import { generatePrincipalKeys } from '../../../libs/auth/principal-keys.js';
import { SignJWT } from 'jose';
import { claimsOf, PRINCIPAL_TOKEN_TYPE } from '../../../libs/auth/principal-claims.js';
import type { Clock } from '../../../libs/core/clock.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import { topicNames, type TopicNames } from '../../../libs/events/topics.js';
import { loadAuditSinkConfig } from '../../../services/audit-sink/config.js';
import { createAuditSinkService } from '../../../services/audit-sink/service.js';
import { EXIT } from '../../../services/cli/cli-error.js';
import type { Service } from '../../../libs/runtime/service.js';
import { loadOpsConsoleConfig } from '../../../services/ops-console/config.js';
import { createOpsConsoleService } from '../../../services/ops-console/service.js';
import { createPostgresStoreCatalog } from '../../../services/catalog/store-catalog.js';
import type { ConsoleRole } from '../../../services/ops-console/roles.js';
import { REDIS_URL, schemaRegistryUrl } from '../../helpers/env.js';
import { createTestKafka, type TestKafka } from '../../helpers/kafka.js';
import { uniqueName } from '../../helpers/names.js';
import { deadLetteredRefund, leaveUnresolved } from '../../helpers/dead-lettered-refund.js';
import type { ReconciliationCase } from '../../../libs/ports/case-store.js';
import { freePort } from '../../helpers/ports.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';
import { createTestRedis, type TestRedis } from '../../helpers/redis.js';
import { cli } from '../../unit/cli/capture.js';
import { databaseUrlFor } from '../cli/cli-env.js';

/** The flags the browser tests run Chromium with (headless, no network of its own, no sandbox in CI). */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The trace viewer the stack's console links trace ids to. */
export const TRACE_URL = 'https://tempo.example/trace/{traceId}?from=console';

const ISSUER = 'test-identity';
const AUDIENCE = 'toolgate-ops-console';

/**
 * One console on the real servers, as deployed: a test schema in Postgres (cases, the audit log, the
 * approval requests), a Redis key prefix, topics of its own on Kafka through the
 * schema registry, the audit sink storing what the console publishes, the ops console itself on a
 * free port, an identity provider key pair whose JWKS the console trusts, and headless Chromium
 * with a fresh profile.
 */
export interface ConsoleStack {
  readonly url: string;
  readonly db: TestSchema;
  readonly redis: TestRedis;
  readonly kafka: TestKafka;
  readonly topics: TopicNames;
  readonly cases: PostgresCaseStore;
  readonly audit: PostgresAuditStore;
  readonly idempotency: RedisIdempotencyStore;
  /**
   * A sign-in token for `operator` with `roles`, signed by the identity provider's key: a principal
   * of tenant `ops` whose `tenants` claim is `tenants` (default `['t1']`, the tenant of
   * deadLetteredRefund), or without that claim when `tenants` is null.
   */
  token(operator: string, roles: readonly ConsoleRole[], tenants?: readonly string[] | null): Promise<string>;
  /**
   * A fresh browser page (own cookies) signed in by pasting a token (development switch) as
   * `operator`, with `tenants` as {@link ConsoleStack.token} takes them.
   */
  signedIn(
    operator: string,
    roles: readonly ConsoleRole[],
    tenants?: readonly string[] | null,
  ): Promise<Page>;
  /** A fresh browser page with its own profile, signed in to nothing. */
  freshPage(): Promise<Page>;
  close(): Promise<void>;
}

/** What a stack may differ in. */
export interface ConsoleStackOptions {
  /**
   * Sign-in at this OpenID Connect provider (and the development sign-ins off). Without it the
   * development switch is on and {@link ConsoleStack.signedIn} pastes a token.
   */
  readonly oidc?: { readonly issuer: string; readonly clientId: string; readonly clientSecret: string };
  /** More console environment (e.g. session timeouts). */
  readonly env?: Readonly<Record<string, string>>;
  /** The console's clock (sessions, pages); default the system's. */
  readonly clock?: Clock;
}

export async function startConsoleStack(options: ConsoleStackOptions = {}): Promise<ConsoleStack> {
  const db = await createTestSchema('ops_console');
  await migrate(db.pool);
  const redis = createTestRedis('ops_console');
  const kafka = createTestKafka('ops-console');
  const prefix = uniqueName('ops_console');
  const topics = topicNames(prefix);
  const base = {
    DATABASE_URL: databaseUrlFor(db.schema),
    KAFKA_BROKERS: kafka.brokers.join(','),
    SCHEMA_REGISTRY_URL: schemaRegistryUrl(),
    TOOLGATE_TOPIC_PREFIX: prefix,
    CALLS_PARTITIONS: '2',
    RESULTS_PARTITIONS: '2',
    AUDIT_PARTITIONS: '2',
    DLQ_PARTITIONS: '2',
    HTTP_PORT: '0',
    LOG_LEVEL: 'silent',
  };
  const created = await cli(['topics', 'create', '--partitions', '2'], { env: base });
  if (created.code !== EXIT.ok) throw new Error(`topics create failed: ${created.stderr}`);

  const keys = generatePrincipalKeys('ops-idp-1');
  const signingKey: KeyObject = createPrivateKey(keys.privateKeyPem);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const silent = pino({ level: 'silent' });
  const services: Service[] = [];
  const sink = createAuditSinkService(
    loadAuditSinkConfig({
      ...base,
      AUDIT_SINK_GROUP_ID: kafka.uniqueGroupId('sink'),
      AUDIT_SINK_ID: 'sink-1',
    }),
    { logger: silent },
  );
  services.push(sink);
  await sink.start();
  const console = createOpsConsoleService(
    loadOpsConsoleConfig({
      ...base,
      REDIS_URL,
      REDIS_KEY_PREFIX: redis.prefix,
      OPS_CONSOLE_ID: 'console-1',
      OPS_CONSOLE_PORT: String(port),
      OPS_CONSOLE_HOST: '127.0.0.1',
      OPS_CONSOLE_ORIGIN: url,
      OPS_CONSOLE_JWKS: JSON.stringify(keys.jwks),
      OPS_CONSOLE_ISSUER: ISSUER,
      OPS_CONSOLE_AUDIENCE: AUDIENCE,
      OPS_CONSOLE_SESSION_SECRET: randomBytes(32).toString('base64'),
      OPS_CONSOLE_TRACE_URL: TRACE_URL,
      ...(options.oidc === undefined
        ? { OPS_CONSOLE_DEV_LOGIN: 'true' }
        : {
            OPS_CONSOLE_OIDC_ISSUER: options.oidc.issuer,
            OPS_CONSOLE_OIDC_CLIENT_ID: options.oidc.clientId,
            OPS_CONSOLE_OIDC_CLIENT_SECRET: options.oidc.clientSecret,
          }),
      ...options.env,
    }),
    {
      logger: silent,
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      // The store catalog with a preview key has the purchase-order tools, so the approvals queue
      // shows a request's arguments through their audit allow-list, as an executor's catalog would.
      catalog: (env) =>
        createPostgresStoreCatalog(env, { previewKey: { alg: 'HS256', secret: randomBytes(32) } }),
    },
  );
  services.push(console);
  await console.start();

  const profile = await mkdtemp(join(tmpdir(), 'ops-console-chromium-'));
  const contexts: BrowserContext[] = [];
  let n = 0;
  const token = (
    operator: string,
    roles: readonly ConsoleRole[],
    tenants: readonly string[] | null = ['t1'],
  ) =>
    new SignJWT({
      ...claimsOf({ id: operator, tenant: 'ops', kind: 'user', scopes: [], roles: [...roles] }),
      ...(tenants === null ? {} : { tenants: [...tenants] }),
    })
      .setProtectedHeader({ alg: 'EdDSA', typ: PRINCIPAL_TOKEN_TYPE, kid: keys.kid })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(signingKey);

  // A persistent context per page: each has its own profile directory, so cookies never mix.
  const freshPage = async (): Promise<Page> => {
    const context = await chromium.launchPersistentContext(join(profile, `p${++n}`), {
      executablePath: '/usr/bin/chromium',
      args: CHROMIUM_ARGS,
      viewport: { width: 1280, height: 900 },
    });
    contexts.push(context);
    return context.pages()[0] ?? (await context.newPage());
  };

  return {
    url,
    db,
    redis,
    kafka,
    topics,
    cases: new PostgresCaseStore(db.pool, systemClock),
    audit: new PostgresAuditStore(db.pool),
    idempotency: new RedisIdempotencyStore(redis.redis, { keyPrefix: redis.prefix }),
    token,
    freshPage,
    async signedIn(operator, roles, tenants) {
      const page = await freshPage();
      await page.goto(`${url}/login`);
      await page.fill('textarea[name=token]', await token(operator, roles, tenants));
      await page.click('button:has-text("Sign in")');
      await page.waitForURL(`${url}/cases`);
      return page;
    },
    async close() {
      for (const c of contexts) await c.close().catch(() => undefined);
      await rm(profile, { recursive: true, force: true });
      for (const s of services.reverse()) await s.stop();
      await (
        await kafka.admin()
      )
        .deleteTopics({ topics: Object.values(topics), timeout: 10_000 })
        .catch(() => undefined);
      await kafka.close();
      const left = await redis.redis.keys(`${redis.prefix}*`);
      if (left.length > 0) await redis.redis.del(...left);
      await redis.close();
      await db.drop();
    },
  };
}

/** Polls `probe` every 50 ms until it gives a value (at most 15 s). */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what}: not within 15 s`);
}

const REFUND_ARGS = { order_id: 'O-5512', amount: 12.5, reason: 'damaged' };

/** A needs_manual case of a dead-lettered issue_refund whose outcome is unknown (UNRESOLVED in Redis). */
export async function manualCase(stack: ConsoleStack): Promise<ReconciliationCase> {
  const idempotencyKey = uniqueName('idem');
  const { case: c } = await stack.cases.openFromDeadLetter(
    deadLetteredRefund({
      callId: uniqueName('call'),
      providerCallId: uniqueName('prov'),
      idempotencyKey,
      deadLetterId: uniqueName('dl'),
      replyTopic: stack.topics.results,
      arguments: REFUND_ARGS,
      nowMs: Date.now(),
      lastKnownStateJson: JSON.stringify({ toolVersion: '1.0.0' }),
    }),
  );
  await leaveUnresolved(stack.idempotency, idempotencyKey, REFUND_ARGS, Date.now(), 3_600_000);
  const moved = await stack.cases.transition(
    c.caseId,
    { to: 'needs_manual', by: 'status-check', note: 'status checks exhausted: only a person can tell' },
    { state: 'open', version: c.version },
  );
  if (!moved.ok) throw new Error('could not escalate the case');
  return moved.case;
}
