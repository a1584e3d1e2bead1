/**
 * How many bytes of JSON text count as one token. Tokenizers of current models average roughly
 * four characters of English or JSON per token; the figure is a cost-attribution estimate (seed
 * §13.1 `input_tokens_equivalent`), not a billing number, and is the same for every provider so
 * that tools can be compared with one another.
 */
export const BYTES_PER_TOKEN = 4;

/**
 * The token equivalent of a value as it travels to or from the model: the UTF-8 length of its JSON
 * text divided by {@link BYTES_PER_TOKEN}, rounded up. A string counts as its own text (it is sent
 * as is). `undefined` and values that cannot be serialized (cycles, BigInt) count as 0. Never throws.
 */
export function tokenEquivalent(value: unknown): number {
  if (value === undefined) return 0;
  let text: string | undefined;
  try {
    text = typeof value === 'string' ? value : JSON.stringify(value);
  } catch {
    return 0;
  }
  if (text === undefined) return 0;
  return Math.ceil(Buffer.byteLength(text, 'utf8') / BYTES_PER_TOKEN);
}
