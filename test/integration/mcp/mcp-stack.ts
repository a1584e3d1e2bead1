import { randomBytes } from 'node:crypto';
import { PostgresCaseStore } from '../../../libs/adapters/postgres/case-store.js';
import { migrate } from '../../../libs/adapters/postgres/migrate.js';
import { RedisIdempotencyStore } from '../../../libs/adapters/redis/index.js';
import { RedisSingleUseStore } from '../../../libs/adapters/redis/single-use-store.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import { createReconciler, type Reconciler } from '../../../services/reconciler/reconciler.js';
import { kafkaOriginalCalls } from '../../../libs/reconcile/original-call.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';
import { pinnedSchemaPolicy, type McpUpstream } from '../../../libs/mcp-upstream/index.js';
import type { EventKind, EventKinds } from '../../../libs/events/contracts.js';
import type { TopicNames } from '../../../libs/events/topics.js';
import type { BusLogger } from '../../../libs/bus/logger.js';
import { silentLogger } from '../../../libs/ports/logger.js';
import type { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import {
  createMcpGateway,
  type McpGateway,
  type McpGatewayOptions,
} from '../../../services/mcp-gateway/gateway.js';
import { kafkaAuditPublisher } from '../../../services/mcp-gateway/audit-publisher.js';
import type { ConfirmationSettings } from '../../../services/mcp-gateway/confirmation.js';
import type { McpRequestRecord } from '../../../services/mcp-gateway/observer.js';
import { RedisMcpTaskStore } from '../../../services/mcp-gateway/task-store.js';
import { createToolgateClient, type ToolgateClient } from '../../../services/sdk/toolgate-client.js';
import { gatewayFixtureTools, SHIPPING_SCOPE } from '../../fixtures/mcp/gateway-tools.js';
import { uniqueName } from '../../helpers/names.js';
import { freePort } from '../../helpers/ports.js';
import { Effects, registryOf } from '../../unit/sdk/test-tools.js';
import type { createTestKafka } from '../../helpers/kafka.js';
import { startFixtureExecutor } from '../executor/test-parts.js';
import { createTokenIssuer, type TokenIssuer } from './token-issuer.js';

const PRINCIPAL_ISSUER = 'toolgate-mcp-gateway-test';
const PRINCIPAL_AUDIENCE = 'toolgate-executor-mcp-test';
const KID = 'mcp-gateway-key';
const PARTITIONS = { calls: 2, results: 1, audit: 1, dlq: 1 } as const;

/** Every line the gateway's logger wrote, for the token-leak scan. */
export type LogLines = string[];

/**
 * Real Kafka, the schema registry and Redis; the real executor in-process running the gateway
 * fixture tools; an SDK client (reply slot 0) and the MCP gateway in front of it on a free port of
 * 127.0.0.1; and a token issuer the gateway trusts. Names are unique per stack.
 */
export interface McpStack {
  /** The MCP endpoint (also the token audience). */
  readonly url: string;
  readonly issuer: TokenIssuer;
  readonly topics: TopicNames;
  readonly effects: Effects;
  readonly registry: ToolRegistry;
  /** Every record the gateway reported, in order. */
  readonly records: McpRequestRecord[];
  readonly logs: LogLines;
  /** The gateway's confirmation settings (secret and store), to mint states in tests. */
  readonly confirmations: ConfirmationSettings;
  /**
   * The decoded events of a topic that match `predicate`, once at least `count` (default 1) have
   * arrived; rejects after 30 s naming how many did. Reads the topic from its beginning.
   */
  waitFor<K extends EventKind>(
    kind: K,
    predicate: (event: EventKinds[K]) => boolean,
    count?: number,
  ): Promise<EventKinds[K][]>;
  /** Every raw message value of a topic read so far (for byte scans); call waitFor first. */
  raw(kind: EventKind): readonly Buffer[];
  close(): Promise<void>;
}

export interface McpStackOptions {
  /** Gateway settings to override (timeouts, mapping). */
  readonly gateway?: Partial<Omit<McpGatewayOptions, 'client' | 'tools' | 'auth'>>;
  /** Also run the reconciler (cases in a fresh Postgres schema) on short check intervals. */
  readonly reconciler?: boolean;
  /**
   * Upstream MCP servers whose imported tools the executor runs and the gateway lists beside the
   * fixture tools, with their pinned-schema rule in the executor's policy. The caller closes them.
   */
  readonly upstreams?: readonly McpUpstream[];
  /** Publish the gateway's audit records to the stack's audit topic (the real `kafkaAuditPublisher`). */
  readonly audit?: boolean;
}

export async function createMcpStack(name: string, options: McpStackOptions = {}): Promise<McpStack> {
  const effects = new Effects();
  const upstreams = options.upstreams ?? [];
  const registry = registryOf([...gatewayFixtureTools(effects), ...upstreams.flatMap((u) => u.tools)]);
  const fixture = await startFixtureExecutor(name, {
    registry,
    partitions: PARTITIONS,
    issuer: PRINCIPAL_ISSUER,
    audience: PRINCIPAL_AUDIENCE,
    kid: KID,
    policyName: 'mcp-test',
    ...(upstreams.length === 0 ? {} : { policy: (base) => pinnedSchemaPolicy(base, upstreams) }),
  });
  const { kafka, topics, bus, codec, redis, privateKey } = fixture;
  let reconciler: Reconciler | undefined;
  let db: TestSchema | undefined;
  if (options.reconciler === true) {
    db = await createTestSchema(name);
    await migrate(db.pool);
    reconciler = createReconciler({
      subscriber: bus,
      publisher: bus,
      codec,
      topics,
      cases: new PostgresCaseStore(db.pool, systemClock),
      idempotency: new RedisIdempotencyStore(redis.redis, {
        keyPrefix: redis.prefix,
        abandonedRetentionMs: 600_000,
      }),
      tools: registry,
      clock: systemClock,
      logger: silentLogger,
      reconcilerId: `${name}-reconciler`,
      groupId: uniqueName(`${name}_reconcilers`),
      replyTopics: { [topics.results]: PARTITIONS.results },
      resultTtlMs: 600_000,
      checkScheduleMs: [200, 400, 800, 1_600, 3_200],
      pollIntervalMs: 50,
      backoff: { baseDelayMs: 20, maxDelayMs: 200 },
      originalCalls: kafkaOriginalCalls({
        kafka: kafka.kafka,
        codec,
        groupPrefix: uniqueName(`${name}_reads`),
      }),
    });
    await reconciler.start();
  }
  const gatewayId = uniqueName('mcp-gateway');
  const client: ToolgateClient = createToolgateClient({
    publisher: bus,
    subscriber: bus,
    codec,
    topics,
    instanceId: gatewayId,
    replySlot: 0,
    tools: registry,
    signing: {
      key: privateKey,
      issuer: PRINCIPAL_ISSUER,
      audience: PRINCIPAL_AUDIENCE,
      kid: KID,
      ttlSeconds: 120,
    },
    defaultTimeoutMs: 30_000,
    // A result that comes after the gateway stopped waiting settles the call's MCP task.
    onResolution: (resolution) => gateway.onResolution(resolution),
  });
  await client.start();

  const port = await freePort();
  const url = `http://127.0.0.1:${port}/mcp`;
  const issuer = createTokenIssuer(url);
  const records: McpRequestRecord[] = [];
  const logs: LogLines = [];
  const logger = capturingLogger(logs);
  const confirmations: ConfirmationSettings = {
    secret: randomBytes(32),
    store: new RedisSingleUseStore(redis.redis, { keyPrefix: redis.prefix }),
  };
  const gateway: McpGateway = createMcpGateway({
    confirmations,
    tasks: { store: new RedisMcpTaskStore(redis.redis, { keyPrefix: redis.prefix }) },
    tools: registry,
    client,
    auth: { issuer: issuer.issuer, resource: url, jwks: issuer.jwks },
    principal: { gatewayScopes: ['mcp:tools'] },
    allowedHosts: ['127.0.0.1', 'localhost'],
    observer: (record) => records.push(record),
    logger,
    ...(options.audit === true
      ? { audit: kafkaAuditPublisher({ publisher: bus, codec, topic: topics.audit, producerId: gatewayId }) }
      : {}),
    ...options.gateway,
  });
  await gateway.listen(port, '127.0.0.1');

  const collectors = new Map<EventKind, TopicCollector>();
  const collector = async (kind: EventKind): Promise<TopicCollector> => {
    let found = collectors.get(kind);
    if (found === undefined) {
      const consumer = kafka.consumer({
        groupId: kafka.uniqueGroupId(`${name}_${kind}`),
        maxWaitTimeInMs: 100,
      });
      found = { consumer, raw: [], decoded: [] };
      collectors.set(kind, found);
      const into = found;
      await consumer.connect();
      await consumer.subscribe({ topic: topics[kind], fromBeginning: true });
      await consumer.run({
        eachMessage: async ({ message }) => {
          into.raw.push(message.value!);
          into.decoded.push(await codec.decode(kind, message.value!));
        },
      });
    }
    return found;
  };
  return {
    url,
    issuer,
    topics,
    effects,
    registry,
    records,
    logs,
    confirmations,
    async waitFor(kind, predicate, count = 1) {
      const c = await collector(kind);
      const deadline = Date.now() + 30_000;
      for (;;) {
        const matching = (c.decoded as EventKinds[typeof kind][]).filter(predicate);
        if (matching.length >= count) return matching;
        if (Date.now() > deadline) {
          throw new Error(`${matching.length} of ${count} matching ${kind} events arrived in 30 s`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    raw: (kind) => collectors.get(kind)?.raw ?? [],
    async close() {
      await Promise.all([...collectors.values()].map((c) => c.consumer.disconnect()));
      await gateway.close();
      await client.stop();
      await reconciler?.stop();
      await fixture.close();
      await db?.drop();
    },
  };
}

interface TopicCollector {
  readonly consumer: ReturnType<ReturnType<typeof createTestKafka>['consumer']>;
  readonly raw: Buffer[];
  readonly decoded: unknown[];
}

function capturingLogger(lines: LogLines): BusLogger {
  const write =
    (level: string) =>
    (obj: unknown, msg?: string): void => {
      lines.push(
        `${level} ${msg ?? ''} ${JSON.stringify(obj, (_k, v: unknown) => (v instanceof Error ? v.message : v))}`,
      );
    };
  return {
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
  };
}

/**
 * How long {@link createSlowAnswerStack}'s gateway waits for a result before answering "outcome
 * unknown". The wait is not the call's deadline: however late an executor gets to the call, it runs.
 */
export const SLOW_ANSWER_GATEWAY_WAIT_MS = 300;

/**
 * A stack whose gateway stops waiting after {@link SLOW_ANSWER_GATEWAY_WAIT_MS}, with a reconciler,
 * and a token of a user allowed the shipping tools (`book_shipment` takes `hang_ms` to answer late).
 */
export async function createSlowAnswerStack(name: string): Promise<{ stack: McpStack; token: string }> {
  const stack = await createMcpStack(name, {
    gateway: { callTimeoutMs: SLOW_ANSWER_GATEWAY_WAIT_MS },
    reconciler: true,
  });
  const token = await stack.issuer.token({
    sub: 'user-ivy',
    tenant: 'acme',
    scope: `mcp:tools ${SHIPPING_SCOPE}`,
  });
  return { stack, token };
}
