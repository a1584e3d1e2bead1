import { classify } from '../core/classify.js';
import { ToolgateError } from '../core/errors.js';

/**
 * A downstream's non-2xx answer, as the REST client raises it before mapping. Carries the status and
 * headers (for `Retry-After`) and the downstream's name — never the response body, the URL's query
 * or any request header, which may hold ids, tokens or another tenant's data.
 */
export class HttpStatusError extends Error {
  override readonly name = 'HttpStatusError';

  constructor(
    readonly downstream: string,
    readonly status: number,
    readonly headers: Headers,
  ) {
    super(`${downstream} answered HTTP ${status}`);
  }
}

/** A model-readable sentence for one kind of refusal, and optionally what to change. */
export interface ErrorWording {
  readonly message: string;
  readonly suggestedFix?: string;
}

/** Tool-specific wording for the statuses the model can act on. */
export interface StatusWordings {
  /** 404: what was not found and how to find the right thing. */
  readonly notFound?: ErrorWording;
  /** 400/422: what was invalid. */
  readonly invalid?: ErrorWording;
  /** 401/403: what the user may not do. Never a hint how to get past the check. */
  readonly forbidden?: { readonly message: string };
}

/**
 * Maps a downstream's HTTP status into the error taxonomy, following `classify`'s
 * conventions so every integration fails the same way:
 * - 404 → CALLER_ERROR, retryable, with a suggested fix (the model can correct the reference);
 * - 400 / 422 and other 4xx → CALLER_ERROR, retryable with corrected arguments;
 * - 401 / 403 → CALLER_ERROR, NOT retryable: the credential (ours, or the user's forwarded one) is
 *   refused, and no argument change helps — nor is a hint given how to pass;
 * - 409 → CALLER_ERROR (conflict with the resource's current state);
 * - 429 → RATE_LIMITED with `retryAfterMs` from `Retry-After` (seconds or HTTP date) or
 *   `retry-after-ms`;
 * - 504 → TIMEOUT (a gateway gave up; the origin may have applied the request: outcome unknown);
 * - other 5xx → SERVER_ERROR (changing arguments will not help).
 * `nowMs` turns an HTTP-date `Retry-After` into a delay. The error's `cause` is the
 * {@link HttpStatusError}.
 */
export function errorForStatus(
  error: HttpStatusError,
  nowMs: number,
  wordings: StatusWordings = {},
): ToolgateError {
  const mapped = classify(error, { nowMs });
  const status = error.status;
  const wording =
    status === 404
      ? wordings.notFound
      : status === 400 || status === 422
        ? wordings.invalid
        : status === 401 || status === 403
          ? wordings.forbidden
          : undefined;
  if (wording === undefined) return mapped;
  const fix = (wording as ErrorWording).suggestedFix;
  return new ToolgateError(mapped.code, wording.message, {
    retryable: mapped.retryable,
    cause: error,
    ...(mapped.retryAfterMs === undefined ? {} : { retryAfterMs: mapped.retryAfterMs }),
    ...(status === 401 || status === 403
      ? {}
      : { suggestedFix: fix ?? mapped.suggestedFix ?? 'Check the arguments and retry.' }),
  });
}

/**
 * Maps what `fetch` threw (or the attempt's abort reason) into the taxonomy: a ToolgateError stays as
 * it is; timeouts, aborts, resets and a socket closed mid-request become TIMEOUT (the request may
 * have been applied: for a state-changing call the outcome is unknown); refused connections and DNS
 * failures become SERVER_ERROR (the request never reached the service).
 */
export function errorForTransport(err: unknown, nowMs: number): ToolgateError {
  return classify(err, { nowMs });
}
