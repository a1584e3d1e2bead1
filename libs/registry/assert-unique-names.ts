import { ToolDefinitionError } from './definition-error.js';
import type { ExportableTool } from './input-json-schema.js';

/**
 * Refuses a tool list that names a tool twice: both providers reject such a request as a whole, so
 * it is caught while building the list rather than as an API error mid-conversation.
 */
export function assertUniqueNames(tools: readonly ExportableTool[]): void {
  const seen = new Set<string>();
  for (const tool of tools) {
    if (seen.has(tool.name)) {
      throw new ToolDefinitionError(tool.name, [
        'the tool list names it twice; offer one version per name (registry.forPrincipal does).',
      ]);
    }
    seen.add(tool.name);
  }
}
