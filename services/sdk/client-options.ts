import { randomUUID } from 'node:crypto';
import { DEFAULT_PRINCIPAL_AUDIENCE, DEFAULT_PRINCIPAL_ISSUER } from '../../libs/auth/principal-defaults.js';
import type { PrincipalSigningKey } from '../../libs/auth/sign-principal.js';
import { silentBusLogger, type BusLogger } from '../../libs/bus/logger.js';
import { systemClock } from '../../libs/core/system-clock.js';
import type { Principal } from '../../libs/core/types.js';
import { CALL_LIMITS, type CallLimits } from '../../libs/events/size-limits.js';
import type { TopicNames } from '../../libs/events/topics.js';
import type { ToolResolver } from '../../libs/pipeline/deps.js';
import type { Clock } from '../../libs/core/clock.js';
import type { EventPublisher, EventSubscriber } from '../../libs/ports/event-bus.js';
import type { EventCodec } from '../../libs/events/event-codec.js';
import { randomHex, type HexSource } from '../../libs/observability/trace-context.js';
import type { PublishedCall, ToolCallResolution } from './result-inbox.js';

/** How the client signs the principal of each turn (see libs/auth signPrincipal). */
export interface PrincipalSigning {
  /**
   * Ed25519 or P-256 private key of the agent backend's auth layer, e.g.
   * `createPrivateKey(readFileSync('principal-signing-key.pem'))` for the PEM that
   * `toolgate keys generate` writes.
   */
  readonly key: PrincipalSigningKey;
  /**
   * The issuer the executors expect (their `PRINCIPAL_ISSUER`). Default
   * {@link DEFAULT_PRINCIPAL_ISSUER}, which is also the executors' default.
   */
  readonly issuer?: string;
  /**
   * The executors' audience (their `PRINCIPAL_AUDIENCE`). Default {@link DEFAULT_PRINCIPAL_AUDIENCE},
   * which is also the executors' default.
   */
  readonly audience?: string;
  /**
   * Lifetime of each assertion, seconds (default 300). Keep it short, but longer than calls may
   * wait in the calls topic: an executor refuses an expired assertion (safely: nothing runs).
   */
  readonly ttlSeconds?: number;
  /** The key id of `key`, as listed in the executors' JWKS (`toolgate keys generate --kid`). */
  readonly kid?: string;
}

/** {@link PrincipalSigning} with its defaults applied. */
export type ResolvedPrincipalSigning = PrincipalSigning & {
  readonly issuer: string;
  readonly audience: string;
};

/** Everything a client uses; the agent backend's main wires the real bus, codec and key. */
export interface ToolgateClientOptions {
  readonly publisher: EventPublisher;
  readonly subscriber: EventSubscriber;
  readonly codec: EventCodec;
  readonly topics: Pick<TopicNames, 'calls' | 'results'>;
  /** Unique per running instance; names its consumer group `toolgate-sdk-<instanceId>`. */
  readonly instanceId: string;
  /**
   * This instance's partition of the results topic (e.g. its StatefulSet ordinal). Must be below
   * the topic's partition count, and unique among running instances (see ROUTING.md).
   */
  readonly replySlot: number;
  readonly signing: PrincipalSigning;
  /**
   * The tool registry, for conflict keys (the calls-topic partition key). Without it every call
   * is keyed by its task, which is correct but serializes a task's calls on one partition.
   */
  readonly tools?: ToolResolver;
  /** How long a turn waits for results when the caller gives no deadline (default 30000 ms). */
  readonly defaultTimeoutMs?: number;
  /**
   * Called with a definite result that arrived after its turn had returned the call as
   * UNRESOLVED (the deadline passed, or the executor reported it unknown): e.g. to tell the model
   * in its next turn, or to update the user. Synchronous; exceptions are logged and ignored.
   */
  readonly onResolution?: (resolution: ToolCallResolution) => void;
  /** Unresolved calls remembered for `onResolution` after their turn (default 10000). */
  readonly maxUnresolved?: number;
  readonly clock?: Clock;
  readonly logger?: BusLogger;
  /** toolgate call ids; default `crypto.randomUUID`. Must be globally unique. */
  readonly newCallId?: () => string;
  /** Randomness for trace and span ids; default crypto. */
  readonly randomHex?: HexSource;
  /**
   * Size limits of published calls (default {@link CALL_LIMITS}). Lower them when your brokers'
   * `message.max.bytes` is below Kafka's default 1 MiB; never raise `maxCallEventBytes` above the
   * executors' decode limit.
   */
  readonly limits?: Partial<CallLimits>;
}

/** The verified caller and the coordinates of one turn of one agent task. */
export interface TurnContext {
  /** Who the agent acts as; signed into every call of the turn, the executor's only source of authorization. */
  readonly principal: Principal;
  readonly taskId: string;
  /** The agent loop's step (round) within the task; with taskId, it fixes the idempotency keys. */
  readonly step: number;
  /** W3C trace id (32 lowercase hex); a fresh one when absent or invalid. */
  readonly traceId?: string;
}

/** Per-turn options. */
export interface TurnOptions {
  /**
   * Absolute deadline, epoch ms, of the turn's calls. It travels with each call: an executor starts
   * no attempt after it and cuts one still running at it, so a call that reaches an executor only
   * after its deadline is refused without running. The turn stops waiting then at the latest (see
   * `waitMs`). Wins over `timeoutMs`.
   */
  readonly deadlineMs?: number;
  /** Relative deadline, ms from the call (default: the client's `defaultTimeoutMs`). */
  readonly timeoutMs?: number;
  /**
   * How long the turn waits for results, ms from the call, when the caller must answer before its
   * calls' deadline (default: until the deadline; a longer wait is cut to it). The calls keep their
   * deadline: one that reaches an executor after the turn stopped waiting still runs, and its result
   * goes to `onResolution`. A wait used as the deadline instead would get calls refused unrun when
   * publishing or the executors are slow — after the turn already answered them "outcome unknown".
   */
  readonly waitMs?: number;
  /**
   * Told once, when the broker has acknowledged the turn's calls and before their results are
   * awaited, which calls it took (a call answered without publishing, or refused by the broker as
   * too large, is not among them; a turn with none is not told). From then on those calls are
   * durable: an executor runs each of them whatever happens to this client. Not called when the
   * publish failed or the turn stopped waiting first. Must not throw (a throw is logged and ignored).
   */
  readonly onPublished?: (calls: readonly PublishedCall[]) => void;
}

/** Options with defaults applied. */
export type ResolvedClientOptions = Required<
  Omit<ToolgateClientOptions, 'tools' | 'onResolution' | 'limits' | 'signing'>
> &
  Pick<ToolgateClientOptions, 'tools' | 'onResolution'> & {
    readonly limits: CallLimits;
    readonly signing: ResolvedPrincipalSigning;
  };

/** Applies defaults and refuses settings that could only fail later (TypeError / RangeError). */
export function resolveClientOptions(options: ToolgateClientOptions): ResolvedClientOptions {
  if (typeof options.instanceId !== 'string' || !/^[A-Za-z0-9._-]{1,200}$/.test(options.instanceId)) {
    throw new TypeError('instanceId must be 1-200 of [A-Za-z0-9._-] (it names a consumer group)');
  }
  if (!Number.isInteger(options.replySlot) || options.replySlot < 0) {
    throw new RangeError('replySlot must be a non-negative integer');
  }
  const resolved: ResolvedClientOptions = {
    ...options,
    signing: resolveSigning(options.signing),
    defaultTimeoutMs: options.defaultTimeoutMs ?? 30_000,
    maxUnresolved: options.maxUnresolved ?? 10_000,
    clock: options.clock ?? systemClock,
    logger: options.logger ?? silentBusLogger,
    newCallId: options.newCallId ?? randomUUID,
    randomHex: options.randomHex ?? randomHex,
    limits: { ...CALL_LIMITS, ...options.limits },
  };
  if (!(resolved.defaultTimeoutMs > 0)) throw new RangeError('defaultTimeoutMs must be positive');
  if (!Number.isInteger(resolved.maxUnresolved) || resolved.maxUnresolved < 0) {
    throw new RangeError('maxUnresolved must be a non-negative integer');
  }
  for (const [name, value] of Object.entries(resolved.limits)) {
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new RangeError(`limits.${name} must be a positive integer`);
    }
  }
  return resolved;
}

/** The signing options with issuer and audience defaulted to the executors' defaults. */
export function resolveSigning(signing: PrincipalSigning): ResolvedPrincipalSigning {
  return {
    ...signing,
    issuer: signing.issuer ?? DEFAULT_PRINCIPAL_ISSUER,
    audience: signing.audience ?? DEFAULT_PRINCIPAL_AUDIENCE,
  };
}

/** The consumer group of one client instance. */
export function replyGroupId(instanceId: string): string {
  return `toolgate-sdk-${instanceId}`;
}
