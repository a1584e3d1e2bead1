import { ToolgateError } from '../../libs/core/errors.js';
import type { ToolCallRequestedEvent } from '../../libs/events/contracts.js';
import { callTooLarge } from '../../libs/events/size-limits.js';
import { OversizedEventError } from '../../libs/events/wire-format.js';
import type { Clock } from '../../libs/core/clock.js';
import type { EventCodec } from '../../libs/events/event-codec.js';
import type { BusMessage } from '../../libs/ports/event-bus.js';
import { retryWithBackoff, type Backoff } from '../../libs/core/backoff.js';
import type { Logger } from '../../libs/ports/logger.js';

export type DecodedCall =
  | { readonly kind: 'call'; readonly event: ToolCallRequestedEvent }
  /** The bytes are not a calls event and never will be: dead-letter them and move on. */
  | { readonly kind: 'poison'; readonly errorMessage: string }
  /**
   * A well-formed request above the codec's size limit, read anyway: it must not run, but its
   * requester can be told. `event.argumentsJson` is replaced by a short note saying how large the
   * request was (the arguments are never copied into a result, an audit record or a dead letter).
   */
  | {
      readonly kind: 'oversized';
      readonly event: ToolCallRequestedEvent;
      /** What the requester is told: SCHEMA_INVALID, retryable when smaller arguments would fit. */
      readonly refusal: ToolgateError;
      /** The codec's sentence (sizes, never content), for the audit decision and the dead letter. */
      readonly errorMessage: string;
    }
  /** The registry stayed unreachable until the batch turned stale: leave the message for redelivery. */
  | { readonly kind: 'gave-up' };

export interface DecodeOptions {
  readonly clock: Clock;
  readonly backoff: Backoff;
  /** A child carrying the message's topic, partition and offset (see `withLogContext`). */
  readonly logger: Logger;
  /** Aborts when the batch turns stale or the executor is shut down hard. */
  readonly signal: AbortSignal;
  readonly heartbeat: () => Promise<void>;
}

/**
 * Decodes one calls-topic message, telling poison from an outage (an outage must never stall or
 * dead-letter a good call, poison must never stall its partition):
 * - MALFORMED_EVENT (wrong magic byte, unknown schema id, a schema of another kind, truncated or
 *   undecodable Avro) — and any other failure that is not an outage — is poison: the same bytes
 *   will never decode, so waiting would stall the partition.
 * - An oversized message that still decodes as a request is `oversized` (see {@link DecodedCall});
 *   one that does not is poison.
 * - DEPENDENCY_UNAVAILABLE (the schema registry cannot be reached) says nothing about the message:
 *   the same message is retried with backoff, heartbeating, until it decodes or `signal` aborts; it
 *   is never dead-lettered and never marked done for that reason.
 * Never throws.
 */
export async function decodeCall(
  codec: EventCodec,
  message: BusMessage,
  options: DecodeOptions,
): Promise<DecodedCall> {
  const decoded = await retryWithBackoff(
    async (): Promise<DecodedCall> => {
      try {
        return { kind: 'call', event: await codec.decode('calls', message.value) };
      } catch (err) {
        if (err instanceof OversizedEventError && err.decoded !== undefined) {
          return oversized(err.decoded as ToolCallRequestedEvent, err);
        }
        if (isOutage(err)) throw err;
        return { kind: 'poison', errorMessage: poisonMessage(err) };
      }
    },
    {
      backoff: options.backoff,
      clock: options.clock,
      signal: options.signal,
      onRetry: ({ retry, delayMs }) => {
        if (retry === 1 || retry % 10 === 0) {
          // The logger is the message's context child: topic, partition and offset are on the line.
          options.logger.warn({ retry, delayMs }, 'schema registry unavailable; retrying the same message');
        }
        void options.heartbeat();
      },
    },
  );
  return decoded?.value ?? { kind: 'gave-up' };
}

/** The schema registry cannot be reached: says nothing about the message, so it is retried. */
function isOutage(err: unknown): boolean {
  return err instanceof ToolgateError && err.code === 'DEPENDENCY_UNAVAILABLE';
}

function oversized(event: ToolCallRequestedEvent, err: OversizedEventError): DecodedCall {
  const withoutArguments = err.bytes - Buffer.byteLength(event.argumentsJson);
  return {
    kind: 'oversized',
    event: {
      ...event,
      argumentsJson: `[omitted: the request was ${err.bytes} bytes, above the ${err.maxBytes}-byte limit]`,
    },
    refusal: callTooLarge(err.bytes, err.maxBytes, withoutArguments < err.maxBytes),
    errorMessage: err.message,
  };
}

/** The codec's own sentence for malformed input (it never quotes the payload); a fixed one otherwise. */
function poisonMessage(err: unknown): string {
  if (err instanceof ToolgateError && err.code === 'MALFORMED_EVENT') return err.message;
  const name = err instanceof Error ? err.name : typeof err;
  return `malformed event: the calls codec failed (${name})`;
}
