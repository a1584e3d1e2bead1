import { setMaxListeners } from 'node:events';
import type { MessageHandler, Subscription } from '../../libs/ports/event-bus.js';
import type { ExecutorDeps } from './executor-deps.js';
import { createCallHandler } from './handle-call.js';

/** A running executor: one member of the executors' consumer group on the calls topic. */
export interface Executor {
  /**
   * Joins the group and starts handling calls. Resolves once the member has its first assignment.
   * Rejects when the subscription cannot be made (topics missing, broker unreachable), or when the
   * executor was started before.
   */
  start(): Promise<void>;
  /**
   * Leaves gracefully: no new call starts, running calls finish, their outputs are published and
   * their offsets committed, then the member leaves and its partitions move to the other members.
   * Calls still running after `shutdownTimeoutMs` are aborted (a state-changing one is then
   * UNRESOLVED, never failed); outputs still unpublished `publishGraceMs` later are abandoned, and
   * their messages are delivered again to the next owner. Idempotent; resolves when done.
   */
  stop(): Promise<void>;
}

const DEFAULT_SHUTDOWN_TIMEOUT_MS = 30_000;
const DEFAULT_PUBLISH_GRACE_MS = 5_000;

/**
 * The call consumer under every executor, over ports only. `createExecutor` is its one caller: it
 * builds the pipeline and wires it, so everything else (the process, the embedded topology, the
 * benchmarks, the test and chaos stacks) builds executors there, not here.
 *
 * Delivery: a call's message is marked done (its offset becomes committable) only after its audit
 * record, dead letter (if any) and result are acknowledged; a crash or rebalance before that
 * redelivers it, and the guard pipeline's idempotency claim answers the redelivery. What that
 * guarantees and why not Kafka transactions: ARCHITECTURE.md, "Delivery semantics".
 *
 * Ordering and concurrency: the executor is a keyed subscriber (KeyedSubscriber in the event-bus
 * port). Calls sharing a resource key run one at a time in offset order; every other call — same
 * partition or not — runs concurrently, up to `maxConcurrency` per executor, and fetching never
 * waits for a running call, so a call whose downstream hangs holds only the later calls of its own
 * key. The committed offset never passes the lowest unfinished call. When a partition moves while
 * one of its calls still runs here, the new owner's redelivery of that call waits on its
 * idempotency claim, and the key's later calls wait behind it there.
 */
export function createCallConsumer(deps: ExecutorDeps): Executor {
  const handleCall = createCallHandler(deps);
  const killTools = new AbortController();
  const killPublishing = new AbortController();
  // Every running call listens on both (its pipeline run, its publishes) and stops listening when it
  // settles, so the count is bounded by concurrency, not a leak; the default cap of 10 would warn.
  setMaxListeners(0, killTools.signal, killPublishing.signal);
  let subscription: Subscription | undefined;
  let starting: Promise<void> | undefined;
  let stopping: Promise<void> | undefined;

  const onMessage: MessageHandler = (message, context) =>
    handleCall(message, {
      stale: context.signal,
      killTools: killTools.signal,
      killPublishing: killPublishing.signal,
      heartbeat: () => context.heartbeat(),
    });

  return {
    start() {
      if (starting !== undefined) return Promise.reject(new Error('the executor was already started'));
      starting = (async () => {
        subscription = await deps.subscriber.subscribeKeyed(
          {
            groupId: deps.groupId,
            topics: [deps.topics.calls],
            fromBeginning: deps.fromBeginning ?? true,
            maxConcurrency: deps.maxConcurrency,
          },
          onMessage,
        );
        deps.logger.info(
          {
            groupId: deps.groupId,
            topic: deps.topics.calls,
            ownerId: deps.ownerId,
            assignment: subscription.assignment(),
          },
          'executor started',
        );
      })();
      return starting;
    },

    stop() {
      stopping ??= (async () => {
        await starting?.catch(() => undefined);
        if (subscription === undefined) return;
        const cancelTimers = new AbortController();
        const shutdownMs = deps.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
        const graceMs = deps.publishGraceMs ?? DEFAULT_PUBLISH_GRACE_MS;
        const after = (ms: number, fire: () => void): void => {
          deps.clock.sleep(ms, cancelTimers.signal).then(fire, () => undefined);
        };
        after(shutdownMs, () => {
          deps.logger.warn({ shutdownMs }, 'shutdown deadline passed; aborting running calls');
          killTools.abort(new Error('executor shutdown deadline'));
        });
        after(shutdownMs + graceMs, () => killPublishing.abort(new Error('executor shutdown deadline')));
        try {
          await subscription.stop();
        } finally {
          cancelTimers.abort();
        }
        deps.logger.info({ ownerId: deps.ownerId }, 'executor stopped');
      })();
      return stopping;
    },
  };
}
