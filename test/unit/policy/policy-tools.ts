import { z } from 'zod';
import type { ExecutionContext } from '../../../libs/core/types.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { context, principal } from '../pipeline/fixtures.js';

/** A tool over `input`, made by defineTool, so the policy schema is derived from a real definition. */
export function policyTool(name: string, input: z.ZodObject, version = '1.0.0'): ToolDefinition {
  return defineTool({
    name,
    version,
    description: `Test tool ${name}: used by the business-rule tests only.`,
    input,
    output: z.object({ ok: z.boolean() }),
    scopes: [],
    owner: 'policy-tests',
    execute: () => Promise.resolve({ ok: true }),
  }) as ToolDefinition;
}

/** A refund: a decimal amount, optional strings the model fills in, nothing that grants authority. */
export const refund = policyTool(
  'issue_refund',
  z.strictObject({
    order_id: z.string(),
    amount: z.number().positive(),
    currency: z.enum(['USD', 'EUR', 'GBP']).optional(),
    note: z.string().optional(),
    // Data the model may fill in; business rules read roles from the verified principal only.
    role: z.string().optional(),
    roles: z.array(z.string()).optional(),
  }),
);

/** A purchase order: Longs, a decimal, a nested record, sets, a boolean, an array of records. */
export const purchaseOrder = policyTool(
  'create_purchase_order',
  z.strictObject({
    supplier: z.string(),
    total: z.number().optional(),
    quantity: z.int().optional(),
    express: z.boolean().optional(),
    sku: z.string().optional(),
    tags: z.array(z.string()).optional(),
    shipping: z.object({ country: z.string(), zip: z.string().optional() }).optional(),
    line_items: z.array(z.object({ sku: z.string(), quantity: z.int() })).optional(),
  }),
);

/** A read-only lookup no rule governs. */
export const lookup = policyTool(
  'lookup_order',
  z.strictObject({ order_id: z.string(), weight: z.number(), sku: z.string().optional() }),
);

/** Every tool above. */
export const TOOLS: readonly ToolDefinition[] = [refund, purchaseOrder, lookup];

/** A context whose verified principal has `roles` (and optionally other fields). */
export function as(
  roles: readonly string[],
  more: { tenant?: string; scopes?: readonly string[]; id?: string } = {},
): ExecutionContext {
  const tenant = more.tenant ?? 't1';
  return context({
    tenant,
    principal: principal({
      roles: [...roles],
      tenant,
      ...(more.scopes === undefined ? {} : { scopes: [...more.scopes] }),
      ...(more.id === undefined ? {} : { id: more.id }),
    }),
  });
}

/** One Cedar `forbid` on `tool` with the given annotations and condition. */
export function forbid(
  id: string,
  tool: string,
  condition: string,
  more: { reason?: string; alternative?: string } = {},
): string {
  return [
    `@id("${id}")`,
    `@reason("${more.reason ?? `refused by ${id}`}")`,
    ...(more.alternative === undefined ? [] : [`@alternative("${more.alternative}")`]),
    `forbid (principal, action == Toolgate::Action::"${tool}", resource)`,
    `when { ${condition} };`,
  ].join('\n');
}
