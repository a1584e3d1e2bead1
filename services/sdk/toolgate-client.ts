import { signPrincipal } from '../../libs/auth/sign-principal.js';
import { ToolgateError } from '../../libs/core/errors.js';
import type { ExecutionContext, ToolCallResult } from '../../libs/core/types.js';
import { callTooLarge } from '../../libs/events/size-limits.js';
import { invalidArguments, refusedCallResult } from '../../libs/providers/normalized-call.js';
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
import type { ProviderMessages, ProviderTurn } from '../../libs/providers/provider-shapes.js';
import { providerCallIdOf, providerMessages, turnCalls } from './provider-turn.js';
import { publishInChunks } from './publish-in-chunks.js';
import { listenForReplies } from './reply-listener.js';
import { ResultInbox } from './result-inbox.js';
import { untilDeadline } from './until-deadline.js';

/** One requested call of a turn and, when it was published, the identity fixed for it. */
export interface TurnCall {
  readonly providerCallId: string;
  readonly tool: string;
  /** Position in the turn (0-based). */
  readonly index: number;
  /**
   * Absent for a call answered without publishing: a free-text custom tool call, a call without a
   * tool name, arguments the canonical form cannot hold, a request above `limits.maxCallEventBytes`.
   */
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
   * only credential the events carry. The turn's calls go out in consecutive publishes of at most
   * `limits.maxPublishBytes` each (in order, so a key's calls keep their order), each call with a
   * W3C `traceparent`, and are answered on this instance's reply partition.
   *
   * One bad or big call never sinks its turn: a call whose parsed arguments are not JSON data the
   * canonical form can hold (nesting deeper than 256, a number such as `1e400` that parses to
   * Infinity) or whose encoded request exceeds `limits.maxCallEventBytes` is answered SCHEMA_INVALID
   * for itself alone, before publishing (retryable when smaller or corrected arguments could pass);
   * such a call is not published (`TurnCall.published` absent), so it runs nowhere and leaves no dead
   * letter. A call the broker itself refuses as too large (a `message.max.bytes` below the limits)
   * is answered the same way, after the publish. The other calls of the turn run as usual.
   *
   * Results are deduped by call id (first wins; a definite result supersedes UNRESOLVED). When the
   * turn stops waiting — at the deadline, or at `waitMs` when that comes first — every call still
   * unanswered gets UNRESOLVED ("still executing, outcome unknown") — never a failure; a definite
   * result arriving later goes to `onResolution`. Calls whose arguments were unparseable are
   * published all the same (raw text) and come back SCHEMA_INVALID from the executor, which audits
   * them.
   *
   * Re-running a turn with the same (taskId, step) and the same model output reproduces every
   * idempotency key, so a retried turn cannot apply an effect twice: the executor answers repeats
   * from its idempotency store (DUPLICATE, with the original result).
   *
   * Rejects — publishing nothing — with ToolgateError INTERNAL when the client is not started,
   * the context is malformed (empty task id, negative step, a principal that cannot be signed),
   * the deadline is not in the future, `waitMs` is not a positive number, or the response repeats
   * a call id. Rejects with DEPENDENCY_UNAVAILABLE when a publish fails (its messages may or may not
   * be written, the pieces after it are not sent: re-run the turn, which is safe as said above).
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
    if (opts.waitMs !== undefined && !(Number.isFinite(opts.waitMs) && opts.waitMs > 0)) {
      throw new ToolgateError('INTERNAL', 'The turn wait must be a positive number of milliseconds.');
    }
    // When the turn stops waiting; the calls keep `deadlineMs`, the deadline the executors honour.
    const waitUntilMs = opts.waitMs === undefined ? deadlineMs : Math.min(deadlineMs, now + opts.waitMs);
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
        const ready = await prepareOrRefuse(input, execution, o.tools, o.newCallId());
        if ('refused' in ready) local.set(index, ready.refused);
        else prepared.set(index, ready);
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
    const indexOf = new Map<OutgoingMessage, number>();
    for (const [index, call] of prepared) {
      const value = await o.codec.encode('calls', requestedEvent(call, envelope));
      const tooLarge = sizeRefusal(call, value.length, o.limits.maxCallEventBytes);
      if (tooLarge !== undefined) {
        // Neither the broker nor an executor would take it: answered here, never published.
        local.set(index, tooLarge);
        prepared.delete(index);
        continue;
      }
      const message: OutgoingMessage = {
        key: call.resourceKey,
        value,
        // Each call is its own span, a sampled child of the turn, so the executor's span hangs under it.
        headers: traceHeaders(traceId, childSpanId(o.randomHex)),
      };
      messages.push(message);
      indexOf.set(message, index);
    }

    if (stopped) throw new ToolgateError('INTERNAL', 'The toolgate client is stopped.');
    const wait = inbox.expect([...prepared.values()].map((p) => p.call));
    const ended = new AbortController();
    running.add(ended);
    try {
      if (messages.length > 0) {
        let refusedByBroker: readonly OutgoingMessage[] = [];
        const published = await untilDeadline(
          clock,
          publishInChunks(o.publisher, o.topics.calls, messages, o.limits.maxPublishBytes).then(
            (done) => void (refusedByBroker = done.tooLarge),
          ),
          waitUntilMs,
          ended.signal,
        );
        if (published.kind === 'failed') {
          throw new ToolgateError(
            'DEPENDENCY_UNAVAILABLE',
            'The tool calls could not be published. Re-run the turn with the same taskId and step: the same idempotency keys make a repeat safe.',
            { cause: published.error },
          );
        }
        if (published.kind === 'done') {
          // Calls the broker itself refused as too large: answered here, no longer awaited.
          for (const message of refusedByBroker) {
            const index = indexOf.get(message)!;
            const call = prepared.get(index)!;
            local.set(index, sizeRefusal(call, message.value.length, 'broker')!);
            prepared.delete(index);
            wait.withdraw([call.call.callId]);
          }
          if (opts.onPublished !== undefined && prepared.size > 0) {
            try {
              opts.onPublished([...prepared.values()].map((p) => p.call));
            } catch (err) {
              logger.error({ err }, 'onPublished threw');
            }
          }
          await untilDeadline(clock, wait.complete, waitUntilMs, ended.signal);
        }
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

/**
 * The prepared call, or the refusal of a call whose arguments are not JSON data the canonical form
 * can hold (too deep, a number outside the JSON range): SCHEMA_INVALID for that call alone,
 * retryable with corrected arguments. Other errors (malformed coordinates) propagate.
 */
async function prepareOrRefuse(
  input: Parameters<typeof prepareCall>[0],
  ctx: ExecutionContext,
  tools: ToolgateClientOptions['tools'],
  callId: string,
): Promise<PreparedCall | { readonly refused: ToolCallResult }> {
  try {
    return await prepareCall(input, ctx, tools, callId);
  } catch (err) {
    if (!(err instanceof ToolgateError && err.code === 'SCHEMA_INVALID')) throw err;
    return { refused: refusedCallResult(invalidArguments(input.providerCallId, input.tool, err.message)) };
  }
}

/**
 * The refusal of a call whose encoded request exceeds `limitBytes`, else undefined. Retryable when
 * the request without its arguments would fit (smaller arguments can pass).
 */
function sizeRefusal(
  call: PreparedCall,
  bytes: number,
  limitBytes: number | 'broker',
): ToolCallResult | undefined {
  if (limitBytes !== 'broker' && bytes <= limitBytes) return undefined;
  const withoutArguments = bytes - Buffer.byteLength(call.argumentsJson);
  return refusedCallResult({
    ok: false,
    id: call.call.providerCallId,
    name: call.call.tool,
    // The broker's limit is unknown here; smaller arguments are worth a try when there were any.
    error: callTooLarge(bytes, limitBytes, limitBytes === 'broker' || withoutArguments < limitBytes),
  });
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
