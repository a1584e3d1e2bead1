import type { AnthropicTool } from '../providers/provider-shapes.js';
import { assertUniqueNames } from './assert-unique-names.js';
import { inputJsonSchema } from './input-json-schema.js';
import type { ExportableTool } from './input-json-schema.js';

/**
 * Anthropic Messages `tools` for these definitions, in the given order:
 * `{ name, description, input_schema }` with `input_schema` the JSON Schema (draft 2020-12) zod 4
 * emits for the input (`io: 'input'`), whose root is always `type: 'object'` (each assignable to the
 * SDK's `Tool`).
 *
 * The schema is passed as generated: Anthropic accepts optional properties and the ordinary
 * constraints, so nothing is made nullable here. Like the OpenAI export it reads only name,
 * description and input schema. Throws ToolDefinitionError for a duplicate name.
 */
export function toAnthropicTools(tools: readonly ExportableTool[]): AnthropicTool[] {
  assertUniqueNames(tools);
  return tools.map((tool) => {
    const schema = inputJsonSchema(tool);
    return {
      name: tool.name,
      description: tool.description,
      input_schema: { ...schema, type: 'object' },
    };
  });
}
