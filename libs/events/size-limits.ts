import { ToolgateError } from '../core/errors.js';

/**
 * The byte limits of events on the wire, in one place: what the SDK checks before it publishes a
 * call, what it sends in one publish, and what every codec refuses to decode.
 */

/**
 * Largest encoded event a codec decodes (default of both codecs). A larger one is refused as
 * MALFORMED_EVENT; a calls event is still read far enough to answer its requester (see
 * {@link MAX_ENVELOPE_READ_BYTES}).
 */
export const DEFAULT_MAX_EVENT_BYTES = 1024 * 1024;

/**
 * Beyond this many bytes an oversized event is not even read for its reply address: it is poison
 * without an answer. Bounds the work an absurd (e.g. highly compressed) message can cost.
 */
export const MAX_ENVELOPE_READ_BYTES = 64 * 1024 * 1024;

/** The limits the SDK applies to the calls it publishes. */
export interface CallLimits {
  /**
   * Most bytes one encoded calls event may have. Below the executors' decode limit
   * ({@link DEFAULT_MAX_EVENT_BYTES}) by enough for the key, the headers and the record framing to
   * stay under the broker's default `message.max.bytes` (1 MiB + 12 bytes), so a call the SDK
   * publishes is never refused by the broker or the executor for its size.
   */
  readonly maxCallEventBytes: number;
  /**
   * Most key + value bytes one publish carries. A turn's calls go out in consecutive publishes of
   * at most this much (one call larger than this goes alone), so no partition's record batch
   * exceeds what the broker accepts.
   */
  readonly maxPublishBytes: number;
}

/** The SDK's default limits (see {@link CallLimits}). */
export const CALL_LIMITS: CallLimits = Object.freeze({
  maxCallEventBytes: DEFAULT_MAX_EVENT_BYTES - 16 * 1024,
  maxPublishBytes: 512 * 1024,
});

/**
 * The refusal of a call whose request is too large to be carried (above `limitBytes`, or refused
 * by the broker itself): code SCHEMA_INVALID, written for the model, naming sizes only. `retryable`
 * says whether a call with smaller arguments could pass (false when the request is too large even
 * without them); only then does it carry a suggested fix.
 */
export function callTooLarge(
  bytes: number,
  limitBytes: number | 'broker',
  retryable: boolean,
): ToolgateError {
  const limit = limitBytes === 'broker' ? 'what the broker accepts' : `the ${limitBytes}-byte limit`;
  return new ToolgateError(
    'SCHEMA_INVALID',
    `The tool call is too large: its request is ${bytes} bytes, above ${limit}, so it was not run.`,
    {
      retryable,
      ...(retryable
        ? {
            suggestedFix:
              'Send smaller arguments: pass a reference (an id, a URL, a file name) instead of the content itself, or split the work into several calls.',
          }
        : {}),
    },
  );
}
