/**
 * Why a fake downstream refused or failed a request, in the vocabulary of an HTTP API: the tool
 * adapters translate it exactly as they would translate a real client's error.
 *
 * - 4xx: the request was refused and nothing was applied (the caller can fix its arguments).
 * - 5xx: the service failed before applying anything (a server error, retryable).
 * A lost response is not a DownstreamError: it surfaces as a reset connection (see `faults.ts`).
 */
export class DownstreamError extends Error {
  /** HTTP-like status: 400, 404, 409, 422 (refused), 500, 503 (failed). */
  readonly status: number;
  /** Machine-readable reason, e.g. `exceeds_refundable`, `not_found`, `unavailable`. */
  readonly reason: string;
  /** Structured facts about the refusal (e.g. `refundable_cents`), for adapters to word their own message. */
  readonly details: Readonly<Record<string, string | number>>;

  constructor(
    status: number,
    reason: string,
    message: string,
    details: Readonly<Record<string, string | number>> = {},
  ) {
    super(message);
    this.name = 'DownstreamError';
    this.status = status;
    this.reason = reason;
    this.details = details;
  }

  /** True for refusals (4xx): the request was understood and definitely not applied. */
  get refused(): boolean {
    return this.status >= 400 && this.status < 500;
  }
}

/** Type guard for {@link DownstreamError}. */
export function isDownstreamError(err: unknown): err is DownstreamError {
  return err instanceof DownstreamError;
}
