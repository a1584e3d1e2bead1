import { LOG_APPEND_TIME, TIMESTAMP_TYPE_CONFIG } from '../../libs/runtime/clients.js';
import type { Logger } from '../../libs/ports/logger.js';

/**
 * The instant a call's principal assertion is judged at: when the broker accepted the call (its
 * message timestamp) if that timestamp can be trusted, else now.
 *
 * A redelivered call — its first executor died, a rebalance moved it, the partition lagged — is then
 * judged as it was when it was accepted, so waiting in the log never turns a valid call into an
 * "unauthorized" one. A replay published later gets a later append time and is judged then.
 * Trusted only when the calls topic stamps LogAppendTime (the memory bus stamps its own clock): a
 * producer's CreateTime is whatever the producer wrote, so a backdated replay would pass. Never later
 * than `nowMs` (a timestamp from the future is clamped), never NaN. Pure.
 */
export function acceptanceTimeMs(messageTimestampMs: number, trusted: boolean, nowMs: number): number {
  if (!trusted || !Number.isFinite(messageTimestampMs) || messageTimestampMs <= 0) return nowMs;
  return Math.min(messageTimestampMs, nowMs);
}

/** Reads one topic config's effective value (a broker default included); undefined when unknown. */
export type TopicConfigReader = (topic: string, name: string) => Promise<string | undefined>;

/**
 * Start-up check of the calls topic: resolves true when it stamps LogAppendTime, so the executor may
 * judge calls as of their message timestamp. Otherwise — CreateTime, or the config cannot be read —
 * logs one warning naming the command that switches it and resolves false: the executor keeps
 * running and judges each call as of now (a call redelivered after its assertion expired is then
 * refused, unless its idempotency key shows it may already have run; see `priorClaim`). Never
 * rejects.
 */
export async function callsTimestampsTrusted(
  readConfig: TopicConfigReader,
  topic: string,
  logger: Logger,
): Promise<boolean> {
  let value: string | undefined;
  try {
    value = await readConfig(topic, TIMESTAMP_TYPE_CONFIG);
  } catch (err) {
    logger.warn({ err, topic }, 'could not read the calls topic config; judging calls as of now');
    return false;
  }
  if (value === LOG_APPEND_TIME) return true;
  logger.warn(
    {
      topic,
      [TIMESTAMP_TYPE_CONFIG]: value ?? 'unknown',
      fix: `kafka-configs.sh --bootstrap-server <broker> --alter --entity-type topics --entity-name ${topic} --add-config ${TIMESTAMP_TYPE_CONFIG}=${LOG_APPEND_TIME}`,
    },
    'the calls topic keeps producer timestamps: calls are judged as of now, so a call redelivered after its principal assertion expired is refused unless it may already have run',
  );
  return false;
}
