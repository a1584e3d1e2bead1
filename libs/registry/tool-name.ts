/**
 * The tool-name rule both providers enforce (OpenAI function names, Anthropic tool names): 1–64
 * characters of ASCII letters, digits, underscore and dash. A name that fails it is refused by the
 * provider API for the whole request, so it is checked when a tool is defined, not when it is sent.
 */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/** True when `name` satisfies {@link TOOL_NAME_PATTERN}. */
export function isValidToolName(name: unknown): name is string {
  return typeof name === 'string' && TOOL_NAME_PATTERN.test(name);
}

/**
 * A model-supplied name or version shortened for an error message. Such strings are untrusted and
 * may be huge; the message the model sees stays bounded.
 */
export function quoteForMessage(value: string, max = 64): string {
  return value.length <= max ? `'${value}'` : `'${value.slice(0, max)}…'`;
}
