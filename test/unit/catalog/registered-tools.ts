import { expect } from 'vitest';
import {
  checkAnthropicTool,
  checkOpenAIStrictTool,
  toAnthropicTools,
  toOpenAITools,
} from '../../../libs/registry/index.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import type { ToolRegistry } from '../../../libs/registry/tool-registry.js';

/** The six core store tools, registered in every mode. */
export const CORE_TOOLS = [
  'crm_lookup_contact',
  'get_weather',
  'issue_refund',
  'lookup_order',
  'search_customers',
  'update_inventory',
];

/** The report-job trio, registered in every mode. */
export const REPORT_JOB_TOOLS = ['check_job_status', 'get_job_result', 'submit_report_job'];

/** The purchase-order pair (memory mode always, server mode with a preview secret). */
export const PURCHASE_ORDER_TOOLS = ['create_purchase_order', 'preview_purchase_order'];

/** The tools registered only when their backend is configured. */
export const CONFIGURED_TOOLS = ['read_document', 'run_report_query', 'submit_filing'];

/**
 * Every registered version of every tool, resolved through the registry the way the executor does
 * (so a tool registered by any path is included, and one that does not resolve fails here).
 */
export function registeredTools(registry: ToolRegistry, tenant = 't1'): ToolDefinition[] {
  return registry.list().map((entry) => {
    const resolved = registry.resolve(entry.name, { version: entry.version, tenant });
    if (!resolved.ok) throw new Error(`${entry.name}@${entry.version} is listed but does not resolve`);
    return resolved.tool;
  });
}

/**
 * Exports every registered tool to OpenAI strict mode and to Anthropic and asserts that each export
 * breaks no provider rule; returns the tool names checked, sorted.
 */
export function expectProviderExportsValid(registry: ToolRegistry): string[] {
  const tools = registeredTools(registry);
  const openai = toOpenAITools(tools, { strict: true });
  const anthropic = toAnthropicTools(tools);
  expect(openai).toHaveLength(tools.length);
  expect(anthropic).toHaveLength(tools.length);
  for (const tool of openai) {
    expect([tool.function.name, checkOpenAIStrictTool(tool)]).toEqual([tool.function.name, []]);
  }
  for (const tool of anthropic) expect([tool.name, checkAnthropicTool(tool)]).toEqual([tool.name, []]);
  return tools.map((t) => t.name).sort();
}
