import { generateKeyPairSync } from 'node:crypto';
import { DEFAULT_PRINCIPAL_AUDIENCE, DEFAULT_PRINCIPAL_ISSUER } from '../../libs/auth/principal-defaults.js';
import { createPrincipalVerifier } from '../../libs/auth/principal-verifier.js';
import type { TopicNames } from '../../libs/events/topics.js';
import type { Catalog } from '../../libs/catalog/catalog.js';
import type { ManagedCircuitBreakers } from '../../libs/execution/breakers.js';
import type { AuditStore } from '../../libs/ports/audit-store.js';
import type { CaseStore } from '../../libs/ports/case-store.js';
import type { Clock } from '../../libs/core/clock.js';
import type { EventBus } from '../../libs/ports/event-bus.js';
import type { EventCodec } from '../../libs/events/event-codec.js';
import type { IdempotencyStore } from '../../libs/ports/idempotency-store.js';
import type { FactStore } from '../../libs/ports/fact-store.js';
import type { RateLimiter } from '../../libs/ports/rate-limiter.js';
import { createAuditSink, type AuditSink } from '../audit-sink/audit-sink.js';
import { createExecutor, EXECUTOR_DEFAULTS, type GuardedExecutor } from '../executor/create-executor.js';
import { createReconciler, type Reconciler } from '../reconciler/reconciler.js';
import { subscriberCalls } from '../../libs/reconcile/original-call.js';
import { createToolgateClient, type ToolCallResolution, type ToolgateClient } from '../sdk/index.js';
import type { TopologyLogger } from './topology-logger.js';

/** Partition counts of the four topics. */
export interface TopicPartitions {
  readonly calls: number;
  readonly results: number;
  readonly audit: number;
  readonly dlq: number;
}

/**
 * What a topology is made of. The same parts come in two flavours: in-memory (embedded mode) and
 * real servers (Kafka, schema registry, Redis, Postgres); the topology itself never knows which.
 */
export interface TopologyParts {
  readonly bus: EventBus;
  readonly codec: EventCodec;
  readonly topics: TopicNames;
  readonly partitions: TopicPartitions;
  /** Shared by every executor: one idempotency claim and one rate budget across all of them. */
  readonly idempotency: IdempotencyStore;
  readonly rateLimiter: RateLimiter;
  /** Shared by every executor: the aggregate facts of the business rules. */
  readonly facts: FactStore;
  readonly auditStore: AuditStore;
  /** Reconciliation cases the reconciler opens from dead letters. */
  readonly caseStore: CaseStore;
  /** The tools, rules and outbound limits the executors run. */
  readonly catalog: Catalog;
  readonly clock: Clock;
  readonly logger: TopologyLogger;
  /** Names the consumer groups and instance ids, so two deployments on one cluster never mix. */
  readonly deploymentId: string;
  /** Executor instances in the executors' consumer group. Default 2. */
  readonly executors?: number;
  /** Waits before each status check of a reconciliation round. Default: the reconciler's (1-16 s). */
  readonly checkScheduleMs?: readonly number[];
  /** Called when a call the client returned as UNRESOLVED gets its definite answer later. */
  readonly onResolution?: (resolution: ToolCallResolution) => void;
}

/** A running toolgate: executors, an audit sink, a reconciler and one agent-side SDK client. */
export interface Topology {
  /** The agent backend's view: publish a provider turn's calls, get provider-shaped results. */
  readonly client: ToolgateClient;
  /** Each executor's circuit breakers (per downstream), for operators and tests. */
  readonly breakers: readonly ManagedCircuitBreakers[];
  /**
   * Creates the topics, then starts the executors, the audit sink, the reconciler and the client.
   * Resolves when every member has joined its group; rejects (after stopping what started) when
   * one cannot.
   */
  start(): Promise<void>;
  /**
   * Stops the client, then the executors (running calls finish), then the reconciler and the sink.
   * Idempotent.
   */
  stop(): Promise<void>;
  /**
   * Resolves once every call id has its audit record in the store (the sink writes asynchronously),
   * rejects after `timeoutMs` naming the ids still missing.
   */
  awaitAudited(callIds: readonly string[], timeoutMs?: number): Promise<void>;
}

const ISSUER = DEFAULT_PRINCIPAL_ISSUER;
const AUDIENCE = DEFAULT_PRINCIPAL_AUDIENCE;
const KEY_ID = 'agent-backend-1';

/**
 * Wires one toolgate deployment from its parts: N executors (`createExecutor`) sharing one consumer
 * group, each with its own guard pipeline and breakers over the shared idempotency store and rate limiter;
 * an audit sink from the audit topic into the audit store; a reconciler turning dead letters into
 * cases and settling them by status check; and an SDK client on reply partition 0.
 * The agent backend's principal-signing key pair is made here; only its public half reaches the
 * executors, whose verifier is the only source of authorization facts.
 */
export function createTopology(parts: TopologyParts): Topology {
  const { bus, codec, topics, clock, logger, catalog, deploymentId } = parts;
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const verifier = createPrincipalVerifier({
    keys: { [KEY_ID]: publicKey },
    issuer: ISSUER,
    audience: AUDIENCE,
  });

  const replyTopics = { [topics.results]: parts.partitions.results };
  const executors: GuardedExecutor[] = [];
  for (let i = 0; i < (parts.executors ?? 2); i++) {
    executors.push(
      createExecutor({
        catalog,
        bus,
        codec,
        topics,
        replyTopics,
        idempotency: parts.idempotency,
        rateLimiter: parts.rateLimiter,
        facts: parts.facts,
        verifier,
        // The memory bus stamps each message with its own clock when it accepts it.
        trustsMessageTimestamps: true,
        ownerId: `${deploymentId}-executor-${i}`,
        groupId: `${deploymentId}-executors`,
        settings: { shutdownTimeoutMs: 10_000 },
        clock,
        logger,
      }),
    );
  }
  const breakers = executors.map((e) => e.breakers);
  const sink: AuditSink = createAuditSink({
    subscriber: bus,
    publisher: bus,
    codec,
    topics,
    store: parts.auditStore,
    logger,
    groupId: `${deploymentId}-audit-sink`,
    clock,
    partitionsConcurrently: parts.partitions.audit,
  });
  const reconciler: Reconciler = createReconciler({
    subscriber: bus,
    publisher: bus,
    codec,
    topics,
    cases: parts.caseStore,
    idempotency: parts.idempotency,
    tools: catalog.registry,
    clock,
    logger,
    reconcilerId: `${deploymentId}-reconciler`,
    groupId: `${deploymentId}-reconcilers`,
    replyTopics,
    resultTtlMs: EXECUTOR_DEFAULTS.resultTtlMs,
    ...(parts.checkScheduleMs === undefined ? {} : { checkScheduleMs: parts.checkScheduleMs }),
    pollIntervalMs: 100,
    originalCalls: subscriberCalls({ subscriber: bus, codec, groupPrefix: `${deploymentId}-calls` }),
  });
  const client = createToolgateClient({
    publisher: bus,
    subscriber: bus,
    codec,
    topics,
    instanceId: `${deploymentId}-agent`,
    replySlot: 0,
    signing: { key: privateKey, issuer: ISSUER, audience: AUDIENCE, kid: KEY_ID },
    tools: catalog.registry,
    clock,
    logger,
    defaultTimeoutMs: 20_000,
    ...(parts.onResolution === undefined ? {} : { onResolution: parts.onResolution }),
  });

  let started: Promise<void> | undefined;
  let stopped: Promise<void> | undefined;
  const stopAll = async (): Promise<void> => {
    await client.stop();
    await Promise.all(executors.map((e) => e.stop()));
    await reconciler.stop();
    await sink.stop();
  };

  return {
    client,
    breakers,
    start() {
      started ??= (async () => {
        await bus.ensureTopics([
          { topic: topics.calls, partitions: parts.partitions.calls },
          { topic: topics.results, partitions: parts.partitions.results },
          { topic: topics.audit, partitions: parts.partitions.audit },
          { topic: topics.dlq, partitions: parts.partitions.dlq },
        ]);
        try {
          await Promise.all([
            ...executors.map((e) => e.start()),
            sink.start(),
            reconciler.start(),
            client.start(),
          ]);
        } catch (err) {
          await stopAll().catch(() => undefined);
          throw err;
        }
      })();
      return started;
    },
    stop() {
      stopped ??= stopAll();
      return stopped;
    },
    async awaitAudited(callIds, timeoutMs = 15_000) {
      const deadline = clock.now() + timeoutMs;
      let missing = [...callIds];
      for (;;) {
        const found = await Promise.all(
          missing.map(async (callId) => (await parts.auditStore.query({ callId, limit: 1 })).length > 0),
        );
        missing = missing.filter((_, i) => !found[i]);
        if (missing.length === 0) return;
        if (clock.now() >= deadline) {
          throw new Error(`no audit record after ${timeoutMs} ms for call(s) ${missing.join(', ')}`);
        }
        await clock.sleep(25);
      }
    },
  };
}
