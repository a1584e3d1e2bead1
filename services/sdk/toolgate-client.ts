import { signPrincipal } from '../../libs/auth/sign-principal.js';
import { ToolgateError } from '../../libs/core/errors.js';
import type { ExecutionContext, ToolCallResult } from '../../libs/core/types.js';
import { refusedCallResult } from '../../libs/providers/normalized-call.js';
import type { OutgoingMessage, Subscription } from '../../libs/ports/event-bus.js';
import {
  childSpanId,
  isValidTraceId,
  newTraceId,
  traceHeaders,
} from '../../libs/observability/trace-context.js';
import { resultFromEvent, stillExecuting } from './call-results.js';
import {
  replyGroupId,
  resolveClientOptions,
  type ToolgateClientOptions,
  type TurnContext,
  type TurnOptions,
} from './client-options.js';
import { prepareCall, requestedEvent, type PreparedCall, type TurnEnvelope } from './prepare-call.js';
import {
  providerCallIdOf,
  providerMessages,
  turnCalls,
  type ProviderMessages,
  type ProviderTurn,
} from './provider-turn.js';
import { listenForReplies } from './reply-listener.js';
import { ResultInbox } from './result-inbox.js';
import { untilDeadline } from './until-deadline.js';

/** One requested call of a turn and, when it was published, the identity fixed for it. */
export interface TurnCall {
  readonly providerCallId: string;
  readonly tool: string;
  /** Position in the turn (0-based). */
  readonly index: number;
  /** Absent for a call answered without publishing (a free-text custom tool call, a call without a tool name). */
  readonly published?: {
    readonly callId: string;
    readonly idempotencyKey: string;
    readonly resourceKey: string;
  };
}

/** What a turn produced: results per call and the provider messages to append to the conversation. */
export type TurnOutcome<P extends ProviderTurn['provider'] = ProviderTurn['provider']> = Extract<
  ProviderMessages,
  { provider: P }
> & {
  /** One per requested call, in request order; `callId` is the provider's call id. */
  readonly results: readonly ToolCallResult[];
  readonly calls: readonly TurnCall[];
  readonly traceId: string;
};

/** The agent SDK: publishes a turn's tool calls and collects their results. */
export interface ToolgateClient {
  /**
   * Joins the reply partition (see ROUTING.md). Resolves once results of anything published
   * afterwards are certain to be read. Idempotent; after a rejection it may be called again.
   */
  start(): Promise<void>;
  /**
   * Ends running turns at once (their missing calls become UNRESOLVED), then leaves the reply
   * group. Idempotent; the client cannot be started again.
   */
  stop(): Promise<void>;
  /**
   * Runs the tool calls of one assistant response and answers every one of them.
   *
   * For each call, once, before publishing: a fresh toolgate call id; the idempotency key
   * (tenant, taskId, step, index, tool, arguments); the partition key (the tool's conflict key,
   * else `<tenant>:task:<taskId>`). The principal is signed once per turn (short TTL) and is the
   * only credential the events carry. The turn's calls go out in ONE publish, each with a W3C
   * `traceparent`, and are answered on this instance's reply partition.
   *
   * Results are deduped by call id (first wins; a definite result supersedes UNRESOLVED). At the
   * deadline every call still unanswered gets UNRESOLVED ("still executing, outcome unknown") —
   * never a failure; a definite result arriving later goes to `onResolution`. Calls whose
   * arguments were unparseable are published all the same (raw text) and come back SCHEMA_INVALID
   * from the executor, which audits them.
   *
   * Re-running a turn with the same (taskId, step) and the same model output reproduces every
   * idempotency key, so a retried turn cannot apply an effect twice: the executor answers repeats
   * from its idempotency store (DUPLICATE, with the original result).
   *
   * Rejects — publishing nothing — with ToolgateError INTERNAL when the client is not started,
   * the context is malformed (empty task id, negative step, a principal that cannot be signed),
   * the deadline is not in the future, or the response repeats a call id. Rejects with
   * DEPENDENCY_UNAVAILABLE when the publish fails (its messages may or may not be written: re-run
   * the turn, which is safe as said above).
   */
  runTurn<T extends ProviderTurn>(
    turn: T,
    ctx: TurnContext,
    opts?: TurnOptions,
  ): Promise<TurnOutcome<T['provider']>>;
}

/** Builds a client; call `start()` before the first turn. */
export function createToolgateClient(options: ToolgateClientOptions): ToolgateClient {
  const o = resolveClientOptions(options);
  const { clock, logger } = o;
  const inbox = new ResultInbox({
    maxUnresolved: o.maxUnresolved,
    onResolution: (resolution) => {
      try {
        o.onResolution?.(resolution);
      } catch (err) {
        logger.error({ callId: resolution.call.callId, err }, 'onResolution threw');
      }
    },
    onForget: (call) =>
      logger.warn(
        { callId: call.callId },
        'forgetting an unresolved call; its late resolution will be dropped',
      ),
  });
  const running = new Set<AbortController>();
  let starting: Promise<void> | undefined;
  let subscription: Subscription | undefined;
  let stopped = false;

  const deliver = (event: Parameters<ResultInbox['deliver']>[0]): void => {
    const verdict = inbox.deliver(event);
    if (verdict === 'duplicate' || verdict === 'unmatched') {
      logger.debug({ callId: event.callId, verdict }, 'result dropped');
    }
  };

  const runTurn = async <T extends ProviderTurn>(
    turn: T,
    ctx: TurnContext,
    opts: TurnOptions = {},
  ): Promise<TurnOutcome<T['provider']>> => {
    if (stopped) throw new ToolgateError('INTERNAL', 'The toolgate client is stopped.');
    if (starting === undefined)
      throw new ToolgateError('INTERNAL', 'Start the toolgate client before running turns.');
    await starting;
    const inputs = turnCalls(turn);
    const requestedIds = inputs.map(providerCallIdOf);
    if (new Set(requestedIds).size !== requestedIds.length) {
      throw new ToolgateError('INTERNAL', 'The response repeats a tool call id; it cannot be answered.');
    }
    const now = clock.now();
    const deadlineMs = Math.floor(opts.deadlineMs ?? now + (opts.timeoutMs ?? o.defaultTimeoutMs));
    if (!Number.isSafeInteger(deadlineMs) || deadlineMs <= now) {
      // Published calls would be reported UNRESOLVED at once while they may still run.
      throw new ToolgateError('INTERNAL', 'The turn deadline must lie in the future.');
    }
    // The caller's trace when it is a valid W3C id, else a fresh one: every call carries one.
    const traceId = isValidTraceId(ctx.traceId) ? ctx.traceId : newTraceId(o.randomHex);
    const tenant = ctx.principal.tenant;

    const prepared = new Map<number, PreparedCall>();
    const local = new Map<number, ToolCallResult>();
    for (const [index, input] of inputs.entries()) {
      if (input.kind === 'refused') local.set(index, refusedCallResult(input.failure));
      else if (input.tool === '') local.set(index, nameless(input.providerCallId));
      else {
        const execution: ExecutionContext = { ...ctx, tenant, index, traceId, deadlineMs };
        prepared.set(index, await prepareCall(input, execution, o.tools, o.newCallId()));
      }
    }

    const envelope: TurnEnvelope = {
      step: ctx.step,
      principalAssertion:
        prepared.size === 0
          ? ''
          : await signPrincipal(ctx.principal, o.signing.key, {
              issuer: o.signing.issuer,
              audience: o.signing.audience,
              ttlSeconds: o.signing.ttlSeconds ?? 300,
              ...(o.signing.kid === undefined ? {} : { kid: o.signing.kid }),
              now: () => clock.now(),
            }),
      traceId,
      replyTopic: o.topics.results,
      replyPartition: o.replySlot,
      deadlineMs,
      requestedAtMs: now,
    };
    const messages: OutgoingMessage[] = [];
    for (const call of prepared.values()) {
      messages.push({
        key: call.resourceKey,
        value: await o.codec.encode('calls', requestedEvent(call, envelope)),
        // Each call is its own span, a sampled child of the turn, so the executor's span hangs under it.
        headers: traceHeaders(traceId, childSpanId(o.randomHex)),
      });
    }

    if (stopped) throw new ToolgateError('INTERNAL', 'The toolgate client is stopped.');
    const wait = inbox.expect([...prepared.values()].map((p) => p.call));
    const ended = new AbortController();
    running.add(ended);
    try {
      if (messages.length > 0) {
        const published = await untilDeadline(
          clock,
          o.publisher.publish(o.topics.calls, messages),
          deadlineMs,
          ended.signal,
        );
        if (published.kind === 'failed') {
          throw new ToolgateError(
            'DEPENDENCY_UNAVAILABLE',
            'The tool calls could not be published. Re-run the turn with the same taskId and step: the same idempotency keys make a repeat safe.',
            { cause: published.error },
          );
        }
        if (published.kind === 'done') await untilDeadline(clock, wait.complete, deadlineMs, ended.signal);
      }
    } finally {
      running.delete(ended);
      ended.abort();
    }
    const events = wait.close();

    const results = inputs.map((input, index): ToolCallResult => {
      const answered = local.get(index);
      if (answered !== undefined) return answered;
      const { call } = prepared.get(index)!;
      const event = events.get(call.callId);
      return event === undefined
        ? stillExecuting(call.providerCallId, call.tool, call.idempotencyKey)
        : resultFromEvent(event, call.providerCallId);
    });
    const calls = inputs.map((input, index): TurnCall => {
      const p = prepared.get(index);
      return {
        providerCallId: requestedIds[index]!,
        tool: input.kind === 'refused' ? input.failure.name : input.tool,
        index,
        ...(p === undefined
          ? {}
          : {
              published: {
                callId: p.call.callId,
                idempotencyKey: p.call.idempotencyKey,
                resourceKey: p.resourceKey,
              },
            }),
      };
    });
    const shaped = providerMessages(turn.provider, requestedIds, results);
    return { ...shaped, results, calls, traceId } as unknown as TurnOutcome<T['provider']>;
  };

  return {
    start() {
      if (stopped) return Promise.reject(new ToolgateError('INTERNAL', 'The toolgate client is stopped.'));
      starting ??= listenForReplies(
        o.subscriber,
        o.codec,
        { topic: o.topics.results, partition: o.replySlot, groupId: replyGroupId(o.instanceId) },
        deliver,
        logger,
      ).then(
        (joined) => {
          subscription = joined;
          logger.info({ instanceId: o.instanceId, replySlot: o.replySlot }, 'toolgate client started');
        },
        (err: unknown) => {
          starting = undefined;
          throw err;
        },
      );
      return starting;
    },

    async stop() {
      if (stopped) return;
      stopped = true;
      for (const turn of running) turn.abort();
      await starting?.catch(() => undefined);
      await subscription?.stop();
    },

    runTurn,
  };
}

function nameless(providerCallId: string): ToolCallResult {
  return refusedCallResult({
    ok: false,
    id: providerCallId,
    name: '',
    error: new ToolgateError('UNKNOWN_TOOL', 'The tool call names no tool.', {
      suggestedFix: 'Call one of the tools you were given, by its name.',
    }),
  });
}
