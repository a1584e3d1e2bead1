/** Characters of serialized JSON counted as one token (see {@link tokenEquivalents}). */
export const CHARS_PER_TOKEN = 4;

/** What one call costs in context, in token equivalents. Same shape as the registry's `CostEstimate`. */
export interface CallTokens {
  /** The request the model emitted: tool name plus arguments. */
  readonly tokensIn: number;
  /** The result the model reads back (payload, or the error on a refusal); later rounds resend it. */
  readonly tokensOut: number;
}

/** The parts of a call request that reach the model's context. */
export interface RequestLike {
  readonly name: string;
  readonly arguments: unknown;
}

/** The parts of a call result that reach the model's context. */
export interface ResultLike {
  readonly payload?: unknown;
  readonly error?: unknown;
}

/**
 * Token equivalents of one call, for the executor to record with each result (as
 * `input_tokens_equivalent` / `output_tokens_equivalent`).
 *
 * Heuristic, stated plainly: the serialized JSON text's length in characters divided by
 * {@link CHARS_PER_TOKEN} (4), rounded up. Current tokenizers average roughly four characters of
 * English or JSON per token; the figure is for comparing tools and tasks with each other, not for
 * billing, and is the same for every provider. `tokensIn` counts the request's name and arguments
 * (0 when no request is given); `tokensOut` counts the payload when present, else the error, else 0.
 *
 * Pure. Never throws: a value JSON cannot serialize (a cycle, a BigInt) counts as 0.
 */
export function tokenEquivalents(result: ResultLike, request?: RequestLike): CallTokens {
  const tokensIn =
    request === undefined ? 0 : estimateTokens({ name: request.name, arguments: request.arguments });
  const tokensOut =
    result.payload !== undefined ? estimateTokens(result.payload) : estimateTokens(result.error);
  return { tokensIn, tokensOut };
}

/**
 * Token equivalent of one value: `ceil(length of its JSON text / 4)`; a string counts as its own text.
 * `undefined` and unserializable values count as 0. Never throws.
 */
export function estimateTokens(value: unknown): number {
  if (value === undefined) return 0;
  let text: string | undefined;
  try {
    text = typeof value === 'string' ? value : JSON.stringify(value);
  } catch {
    return 0;
  }
  return text === undefined ? 0 : Math.ceil(text.length / CHARS_PER_TOKEN);
}
