import type { Tracer } from '@opentelemetry/api';
import { Registry } from 'prom-client';
import type { FactStore } from '../../libs/ports/fact-store.js';
import type { PolicyEngine } from '../../libs/pipeline/deps.js';
import type { PrincipalVerifier } from '../../libs/auth/principal-verifier.js';
import type { Backoff } from '../../libs/core/backoff.js';
import { systemClock } from '../../libs/core/system-clock.js';
import type { Catalog } from '../../libs/catalog/catalog.js';
import { coalescingPublisher } from '../../libs/bus/coalescing-publisher.js';
import type { TopicNames } from '../../libs/events/topics.js';
import { createCircuitBreakers, type ManagedCircuitBreakers } from '../../libs/execution/breakers.js';
import { createOutboundLimiter } from '../../libs/execution/outbound-limiter.js';
import type { ConsumerLagReader } from '../../libs/observability/consumer-lag.js';
import { STAGES } from '../../libs/guards/stages.js';
import { GuardPipeline } from '../../libs/pipeline/guard-pipeline.js';
import type { Clock } from '../../libs/core/clock.js';
import type { EventPublisher, KeyedSubscriber } from '../../libs/ports/event-bus.js';
import type { EventCodec } from '../../libs/events/event-codec.js';
import type { IdempotencyStore } from '../../libs/ports/idempotency-store.js';
import type { IdempotencyTombstones } from '../../libs/ports/idempotency-tombstones.js';
import type { Logger } from '../../libs/ports/logger.js';
import type { RateLimiter } from '../../libs/ports/rate-limiter.js';
import type { CallRunner } from './executor-deps.js';
import { createCallConsumer, type Executor } from './executor.js';
import { createExecutorTelemetry } from './telemetry.js';

/**
 * The executor's tunables. One set of defaults serves every deployment — the executor process
 * (each is also an environment variable, see the executor's README), the embedded topology, the
 * benchmarks and the tests — so they differ only in the adapters they pass in.
 */
export interface ExecutorSettings {
  /** Calls one executor runs at once, across all of its partitions (distinct resource keys only). */
  readonly maxConcurrency: number;
  /** Per downstream: open at `errorPercent` failures once `volume` calls were seen; probe after `resetMs`. */
  readonly breaker: { readonly errorPercent: number; readonly volume: number; readonly resetMs: number };
  /** How long a completed result answers duplicates. */
  readonly resultTtlMs: number;
  /** Added to a tool's worst-case run time to size its in-flight lease. */
  readonly leaseMarginMs: number;
  /** How long a completed key's tombstone lives (with `tombstones`; 0 keeps none). */
  readonly tombstoneTtlMs: number;
  /** How long `stop()` lets running calls finish before aborting them. */
  readonly shutdownTimeoutMs: number;
  /** Bytes of an undecodable call its POISON dead letter keeps (0: size and SHA-256 only). */
  readonly poisonCaptureBytes: number;
  /**
   * Whether the outputs of concurrent calls share produce requests (results, audit records and dead
   * letters of calls finishing together go out in one request per topic; see BENCHMARKS.md).
   */
  readonly coalesceOutputs: boolean;
}

/** The defaults of {@link ExecutorSettings}; the executor's environment variables default to these. */
export const EXECUTOR_DEFAULTS: ExecutorSettings = Object.freeze({
  maxConcurrency: 64,
  breaker: Object.freeze({ errorPercent: 50, volume: 20, resetMs: 30_000 }),
  resultTtlMs: 7 * 24 * 3_600_000,
  leaseMarginMs: 5_000,
  tombstoneTtlMs: 30 * 24 * 3_600_000,
  shutdownTimeoutMs: 30_000,
  poisonCaptureBytes: 0,
  coalesceOutputs: true,
});

/** Metrics and traces: where they go. Without it, metrics land in a private registry nobody scrapes. */
export interface ExecutorInstrumentation {
  /** The process's registry, scraped at /metrics (never prom-client's global one). */
  readonly registry: Registry;
  /** The group's lag on the calls topic, read at scrape time. */
  readonly consumerLag?: ConsumerLagReader;
  /** Default: toolgate's tracer on the global provider (a no-op until an OpenTelemetry SDK is registered). */
  readonly tracer?: Tracer;
}

/** What {@link createExecutor} builds an executor from: your tools, the adapters, the settings. */
export interface ExecutorOptions {
  /** The tools, rules and outbound limits to run (`defineCatalog({ tools })`). */
  readonly catalog: Catalog;
  /** Publishes results, audit records and dead letters; subscribes to the calls topic, keyed. */
  readonly bus: EventPublisher & KeyedSubscriber;
  readonly codec: EventCodec;
  readonly topics: TopicNames;
  /** Topics a call may name as its reply topic, with their partition counts (see `ExecutorDeps`). */
  readonly replyTopics: Readonly<Record<string, number>>;
  /** Shared by every executor of the deployment: one claim per logical call. */
  readonly idempotency: IdempotencyStore;
  /** Optional marks of claimed keys that outlive their records (retention signal). */
  readonly tombstones?: IdempotencyTombstones;
  /** Shared by every executor: one budget per principal / tenant / tool and per downstream. */
  readonly rateLimiter: RateLimiter;
  /**
   * Shared by every executor: the aggregate facts of the business rules (e.g. refunded per order).
   * Required when the catalog's policy declares facts (`policy.factsOf`): without it the executor
   * does not start, since every call those rules govern would be refused.
   */
  readonly facts?: FactStore;
  /**
   * A candidate policy (default: the catalog's `shadowPolicy`) judged beside the catalog's on every call that reaches the business rules:
   * recorded in the audit record (`policy.shadow`) and counted when it disagrees
   * (`toolgate_policy_shadow_disagreements_total`), never acted on. Its facts come from `facts` too.
   */
  readonly shadowPolicy?: PolicyEngine;
  /** Checks each call's signed principal; the only source of authorization facts. */
  readonly verifier: PrincipalVerifier;
  /** This instance's id: lease owner and `producerId` of what it publishes. Unique per process. */
  readonly ownerId: string;
  /** The consumer group every executor of the deployment shares. */
  readonly groupId: string;
  /** Missing fields come from {@link EXECUTOR_DEFAULTS}. */
  readonly settings?: Partial<ExecutorSettings>;
  readonly instrumentation?: ExecutorInstrumentation;
  /** See `ExecutorDeps.trustsMessageTimestamps`: true only for a LogAppendTime calls topic. */
  readonly trustsMessageTimestamps?: boolean;
  /** Default: the system clock. */
  readonly clock?: Clock;
  readonly logger: Logger;
  /** See `ExecutorDeps.fromBeginning`. */
  readonly fromBeginning?: boolean;
  /** See `ExecutorDeps.publishGraceMs`. */
  readonly publishGraceMs?: number;
  /** See `ExecutorDeps.backoff`. */
  readonly backoff?: Backoff;
  /**
   * Wraps the instrumented pipeline where the call consumer runs it, e.g. to time or count each run
   * (the benchmarks do). The wrapper must call the runner it is given exactly once per call and
   * return its run unchanged. Default: none.
   *
   * For tests only, a wrapper may break that contract on purpose to inject a fault: whatever it
   * returns is the executor's pipeline, so a run that rejects is handled as a defect of the
   * pipeline would be (the call is dead-lettered as POISON, the partition moves on).
   */
  readonly aroundRuns?: (runner: CallRunner) => CallRunner;
  /**
   * Circuit breakers to use instead of creating this executor's own, so several executors of one
   * process share one breaker per downstream (a dead downstream then trips once for all of them),
   * e.g. `createExecutor({ ...options, breakers: first.breakers })`. `settings.breaker` is then
   * unused. The executor does not own them: its `stop()` leaves them running, and whoever created
   * them shuts them down after every executor using them stopped (when they are another
   * executor's, that executor's `stop()` does: stop it last). Default: breakers of its own, from
   * `settings.breaker`, shut down by `stop()`.
   */
  readonly breakers?: ManagedCircuitBreakers;
}

/** A running executor and what operators and tests look at. */
export interface GuardedExecutor extends Executor {
  /** This instance's circuit breakers, one per downstream (the given `breakers`, when shared). */
  readonly breakers: ManagedCircuitBreakers;
  /** Where its metrics are (the instrumentation's registry, or a private one). */
  readonly metrics: Registry;
}

/**
 * Builds one executor: the guard pipeline over `catalog` with its own breakers (unless shared
 * ones are given) and outbound limiter, instrumented (metrics, spans), behind the keyed call
 * consumer. Every executor in toolgate — the process, the embedded topology, the benchmarks, the
 * test and chaos stacks — is built here, so they differ only in the adapters passed in. Nothing is
 * opened: the caller owns the bus, stores and catalog, and closes them after `stop()`; `stop()`
 * shuts down the breakers it created.
 */
export function createExecutor(options: ExecutorOptions): GuardedExecutor {
  requireFactStore(options);
  const shadowPolicy = options.shadowPolicy ?? options.catalog.shadowPolicy;
  const settings: ExecutorSettings = {
    ...EXECUTOR_DEFAULTS,
    ...options.settings,
    breaker: { ...EXECUTOR_DEFAULTS.breaker, ...options.settings?.breaker },
  };
  const clock = options.clock ?? systemClock;
  const { catalog } = options;
  const ownsBreakers = options.breakers === undefined;
  const breakers =
    options.breakers ??
    createCircuitBreakers(
      {
        errorThresholdPercentage: settings.breaker.errorPercent,
        volumeThreshold: settings.breaker.volume,
        resetTimeoutMs: settings.breaker.resetMs,
        timeoutMs: false,
      },
      clock,
    );
  const registry = options.instrumentation?.registry ?? new Registry();
  const telemetry = createExecutorTelemetry({
    registry,
    tools: catalog.registry,
    clock,
    breakerStates: () => breakers.states(),
    outboundDownstreams: Object.keys(catalog.downstreamLimits),
    ...(options.instrumentation?.consumerLag === undefined
      ? {}
      : { consumerLag: options.instrumentation.consumerLag }),
    ...(options.instrumentation?.tracer === undefined ? {} : { tracer: options.instrumentation.tracer }),
  });
  telemetry.metrics.declareFactTools(
    catalog.registry
      .list()
      .map((entry) => entry.name)
      .filter(
        (name) => catalog.policy.factsOf(name).length > 0 || (shadowPolicy?.factsOf(name).length ?? 0) > 0,
      ),
  );
  const pipeline = new GuardPipeline(
    {
      tools: catalog.registry,
      idempotency: options.idempotency,
      ...(options.tombstones === undefined || settings.tombstoneTtlMs === 0
        ? {}
        : { tombstones: options.tombstones }),
      rateLimiter: options.rateLimiter,
      verifier: options.verifier,
      policy: catalog.policy,
      ...(shadowPolicy === undefined ? {} : { shadowPolicy }),
      ...(options.facts === undefined ? {} : { facts: options.facts }),
      breakers,
      outbound: createOutboundLimiter(
        options.rateLimiter,
        catalog.downstreamLimits,
        clock,
        (downstream, ms) => telemetry.metrics.observeOutboundWait(downstream, ms),
      ),
      clock,
      owner: options.ownerId,
      settings: {
        resultTtlMs: settings.resultTtlMs,
        leaseMarginMs: settings.leaseMarginMs,
        tombstoneTtlMs: settings.tombstoneTtlMs,
      },
      observer: telemetry.pipelineObserver,
    },
    STAGES,
  );
  const consumer = createCallConsumer({
    publisher: settings.coalesceOutputs ? coalescingPublisher(options.bus) : options.bus,
    subscriber: options.bus,
    codec: options.codec,
    topics: options.topics,
    replyTopics: options.replyTopics,
    pipeline: options.aroundRuns?.(telemetry.instrument(pipeline)) ?? telemetry.instrument(pipeline),
    tools: catalog.registry,
    ...(options.trustsMessageTimestamps === undefined
      ? {}
      : { trustsMessageTimestamps: options.trustsMessageTimestamps }),
    clock,
    logger: options.logger,
    observer: telemetry.observer,
    ownerId: options.ownerId,
    groupId: options.groupId,
    maxConcurrency: settings.maxConcurrency,
    shutdownTimeoutMs: settings.shutdownTimeoutMs,
    maxRawPayloadBytes: settings.poisonCaptureBytes,
    ...(options.fromBeginning === undefined ? {} : { fromBeginning: options.fromBeginning }),
    ...(options.publishGraceMs === undefined ? {} : { publishGraceMs: options.publishGraceMs }),
    ...(options.backoff === undefined ? {} : { backoff: options.backoff }),
  });
  let stopping: Promise<void> | undefined;
  return {
    breakers,
    metrics: registry,
    start: () => consumer.start(),
    stop() {
      stopping ??= consumer.stop().finally(() => {
        if (ownsBreakers) breakers.shutdown();
      });
      return stopping;
    },
  };
}

/** Throws when a policy reads aggregate facts but no fact store was given (a wiring error). */
function requireFactStore(options: ExecutorOptions): void {
  if (options.facts !== undefined) return;
  const policies = [options.catalog.policy, options.shadowPolicy ?? options.catalog.shadowPolicy].filter(
    (p) => p !== undefined,
  );
  const reading = options.catalog.registry
    .list()
    .filter((tool) => policies.some((p) => p.factsOf(tool.name).length > 0));
  if (reading.length > 0) {
    throw new Error(
      `createExecutor: the policy reads aggregate facts for ${reading.map((t) => t.name).join(', ')}, but no fact store (options.facts) was given.`,
    );
  }
}
