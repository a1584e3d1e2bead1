import type { OpenAIFunctionTool } from '../providers/provider-shapes.js';
import { assertUniqueNames } from './assert-unique-names.js';
import { deepFreeze } from '../core/deep-freeze.js';
import { inputJsonSchema } from './input-json-schema.js';
import type { ExportableTool, JsonSchema } from './input-json-schema.js';
import { toStrictJsonSchema } from './strict-schema.js';

/** How {@link toOpenAITools} renders schemas. */
export interface OpenAIExportOptions {
  /**
   * Sets `strict: true` and rewrites each schema into the strict subset (see toStrictJsonSchema):
   * decoding is then constrained to the schema, so arguments always parse and never carry unknown
   * keys. Recommended for state-changing tools.
   */
  readonly strict: boolean;
}

const strictCache = new WeakMap<JsonSchema, JsonSchema>();

function strictSchemaFor(tool: ExportableTool): JsonSchema {
  const plain = inputJsonSchema(tool);
  let strict = strictCache.get(plain);
  if (strict === undefined) {
    strict = deepFreeze(toStrictJsonSchema(plain, tool.name));
    strictCache.set(plain, strict);
  }
  return strict;
}

/**
 * OpenAI Chat Completions `tools` for these definitions, in the given order:
 * `{ type: 'function', function: { name, description, parameters, strict } }` (each assignable to the
 * SDK's `ChatCompletionFunctionTool`).
 *
 * `parameters` is zod 4's JSON Schema of the input (`io: 'input'`), rewritten into the strict subset
 * when `strict` is true. Depends only on name, description and input schema: a tenant override,
 * which swaps the implementation, never changes what the model is shown. Throws
 * ToolDefinitionError for a duplicate name or (strict) a schema strict mode cannot express. Outputs
 * are fresh objects per call, sharing frozen schema nodes with a per-schema cache.
 */
export function toOpenAITools(
  tools: readonly ExportableTool[],
  options: OpenAIExportOptions,
): OpenAIFunctionTool[] {
  assertUniqueNames(tools);
  return tools.map((tool) => ({
    type: 'function',
    function: {
      name: tool.name,
      description: tool.description,
      parameters: options.strict ? strictSchemaFor(tool) : inputJsonSchema(tool),
      strict: options.strict,
    },
  }));
}
