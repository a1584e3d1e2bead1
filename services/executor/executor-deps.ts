import type { ExecutionContext, NormalizedToolCall } from '../../libs/core/types.js';
import type { CallTokens } from '../../libs/cost/token-equivalents.js';
import type { TopicNames } from '../../libs/events/topics.js';
import type { PipelineRun, RunOptions } from '../../libs/pipeline/guard-pipeline.js';
import type { TraceContext } from '../../libs/observability/trace-context.js';
import type { ToolResolver } from '../../libs/pipeline/deps.js';
import type { Clock } from '../../libs/core/clock.js';
import type { EventPublisher, KeyedSubscriber } from '../../libs/ports/event-bus.js';
import type { EventCodec } from '../../libs/events/event-codec.js';
import type { Backoff } from '../../libs/core/backoff.js';
import type { Logger } from '../../libs/ports/logger.js';
import type { ExecutorObserver } from './executor-observer.js';

/**
 * Runs one call through the guard pipeline. `GuardPipeline` is the implementation, usually wrapped
 * by libs/observability `instrumentPipeline`; the contract is the pipeline's: total (never
 * rejects), exactly one result and one audit record per run, and safe to repeat for the same call
 * (the idempotency stage makes one effect out of many runs).
 *
 * `opts.parent` is the request's `traceparent`, the remote parent of the call's span. A traced
 * runner returns `outgoing`, the span everything published about the call is a child of; a plain
 * pipeline ignores `parent` and returns none (the executor then makes a span id of its own). An
 * instrumented runner also returns `tokens`, the call's token equivalents its metrics recorded; the
 * result event carries the same figures (computed by the executor when a runner returns none).
 */
export interface CallRunner {
  run(
    call: NormalizedToolCall,
    ctx: ExecutionContext,
    opts: RunOptions & { readonly parent?: TraceContext | null },
  ): Promise<PipelineRun & { readonly outgoing?: TraceContext; readonly tokens?: CallTokens }>;
}

/** Everything an executor uses. main.ts wires the real adapters; tests wire in-memory ones. */
export interface ExecutorDeps {
  readonly publisher: EventPublisher;
  readonly subscriber: KeyedSubscriber;
  readonly codec: EventCodec;
  readonly topics: TopicNames;
  /**
   * Topics a request may name as its reply topic, each with its partition count. Requests naming
   * anything else (or a partition outside the count) are dead-lettered as POISON, never published
   * to. Usually `{ [topics.results]: <its partition count> }`.
   */
  readonly replyTopics: Readonly<Record<string, number>>;
  readonly pipeline: CallRunner;
  /** The registry the pipeline resolves against; read to know whether a failed tool changes state. */
  readonly tools: ToolResolver;
  /**
   * Whether a calls message's timestamp is the time the broker accepted it (Kafka: the calls topic
   * has `message.timestamp.type=LogAppendTime`; the memory bus stamps its own clock). When true, a
   * call's principal assertion is judged as of that time, so a redelivery is judged as it was when
   * accepted; when false (default) as of now. Never set it for a topic that keeps producer
   * timestamps: a producer could backdate a replay.
   */
  readonly trustsMessageTimestamps?: boolean;
  readonly clock: Clock;
  /** Call handling logs through per-message children of it (see `withLogContext`). */
  readonly logger: Logger;
  /**
   * Answers given without the pipeline (malformed envelopes), dead letters and refused principals.
   * Default: observes nothing.
   */
  readonly observer?: ExecutorObserver;
  /** This instance's id: `producerId` of everything it publishes (the pipeline's lease owner too). */
  readonly ownerId: string;
  /** The consumer group all executors of a deployment share. */
  readonly groupId: string;
  /** Calls this instance runs at once, across all of its partitions (distinct resource keys only). */
  readonly maxConcurrency: number;
  /** Where a partition the group never consumed starts: earliest (default true) or the log end. */
  readonly fromBeginning?: boolean;
  /**
   * How long `stop()` lets running calls finish before aborting them (their signal fires; a
   * state-changing call cut short is UNRESOLVED, never failed). Default 30 s.
   */
  readonly shutdownTimeoutMs?: number;
  /** After the abort, how long outputs still get to publish before `stop()` gives up. Default 5 s. */
  readonly publishGraceMs?: number;
  /** Retry pacing for an unreachable schema registry or broker. Default 100 ms doubling to 5 s. */
  readonly backoff?: Backoff;
  /** Bytes of an undecodable message its dead letter keeps. Default 0 (size and SHA-256 only). */
  readonly maxRawPayloadBytes?: number;
  /** Unique ids for audit records (one per attempt). Default `crypto.randomUUID`. */
  readonly newId?: () => string;
}
