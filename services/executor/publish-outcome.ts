import { anySignal } from '../../libs/core/any-signal.js';
import { raceAbort } from '../../libs/execution/attempt-scope.js';
import type { Clock } from '../../libs/core/clock.js';
import type { EventPublisher, OutgoingMessage } from '../../libs/ports/event-bus.js';
import { backoffCapMs, waitUnlessAborted, type Backoff } from '../../libs/core/backoff.js';
import type { Logger } from '../../libs/ports/logger.js';

/** One encoded message headed for one topic. */
export interface Outgoing {
  readonly topic: string;
  readonly message: OutgoingMessage;
  /** For logs: 'result', 'audit', 'dead letter'. */
  readonly what: string;
}

export interface PublishOptions {
  readonly clock: Clock;
  readonly backoff: Backoff;
  readonly logger: Logger;
  /** Aborts when the batch turns stale: stop retrying (the message will be delivered again). */
  readonly stale: AbortSignal;
  /** Aborts at the hard shutdown deadline: stop waiting even for a publish in progress. */
  readonly kill: AbortSignal;
  readonly heartbeat: () => Promise<void>;
}

/**
 * Publishes a call's outputs phase by phase: every message of a phase (concurrently), and only when
 * all of them are acknowledged, the next phase. A failed publish is retried with backoff — only the
 * messages not yet acknowledged — until it succeeds, or the batch turns stale, or the hard shutdown
 * deadline passes; then it resolves false and the caller must NOT mark the call done, so it is
 * delivered again (and answered from the idempotency store, not run again).
 *
 * The executor puts the audit record and the dead letter in the first phase and the result in the
 * second: whoever sees a result can rely on the attempt being audited and the case being opened.
 * Never rejects.
 */
export async function publishPhases(
  publisher: EventPublisher,
  phases: readonly (readonly Outgoing[])[],
  options: PublishOptions,
): Promise<boolean> {
  for (const phase of phases) {
    let pending = [...phase];
    for (let retry = 1; pending.length > 0; retry++) {
      if (options.kill.aborted) return false;
      const settled = await Promise.allSettled(
        pending.map((out) => raceAbort(publisher.publish(out.topic, [out.message]), options.kill)),
      );
      const failed = pending.filter((_, i) => settled[i]!.status === 'rejected');
      if (failed.length === 0) break;
      const delayMs = backoffCapMs(options.backoff, retry);
      options.logger.warn(
        {
          failed: failed.map((out) => ({
            what: out.what,
            topic: out.topic,
            err: reasonOf(settled, pending, out),
          })),
          retry,
          delayMs,
        },
        'publishing a call outcome failed; retrying',
      );
      if (options.stale.aborted || options.kill.aborted) return false;
      pending = failed;
      void options.heartbeat();
      const stop = anySignal([options.stale, options.kill]);
      const waited = await waitUnlessAborted(options.clock, delayMs, stop.signal).finally(() =>
        stop.dispose(),
      );
      if (!waited) return false;
    }
  }
  return true;
}

function reasonOf(settled: PromiseSettledResult<void>[], pending: Outgoing[], out: Outgoing): string {
  const result = settled[pending.indexOf(out)];
  if (result?.status !== 'rejected') return '';
  const reason: unknown = result.reason;
  return reason instanceof Error ? reason.message : String(reason);
}
