import { z } from 'zod';
import type { Clock } from '../../../libs/core/clock.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { CUSTOMER_SEARCH_FIELDS, type CrmApi } from '../../downstreams/crm/crm-api.js';
import { callDownstream } from '../downstream-failure.js';
import { crmViewer, hasRole, SUPPORT_ROLE } from '../principal-facts.js';

const DEFAULT_LIMIT = 5;

const input = z.strictObject({
  query: z
    .string()
    .min(2)
    .max(100)
    .describe(
      "What the user gave you to identify the customer: part of a name ('Okafor'), an email address, or a phone number (only digits are compared). 2-100 characters.",
    ),
  field: z
    .enum(CUSTOMER_SEARCH_FIELDS)
    .optional()
    .describe('Search only this field. Omit to search name, email and phone together.'),
  limit: z.int().min(1).max(10).optional().describe('Most matches to return, 1-10. Default 5.'),
});

const output = z.object({
  matches: z.array(z.object({ customer_id: z.string(), name: z.string(), email_hint: z.string() })),
  more_may_exist: z.boolean(),
});

export type SearchCustomersInput = z.infer<typeof input>;
export type SearchCustomersOutput = z.infer<typeof output>;

/** `a***@example.com`: enough for a person to recognise, not enough to contact. */
export function maskEmail(email: string): string {
  const at = email.indexOf('@');
  if (at <= 0) return '***';
  return `${email[0]}***${email.slice(at)}`;
}

/**
 * `search_customers` (read-only): finds customers by name, email or phone and returns ids, names and
 * masked emails only. Support staff only (`customers:read` scope and the `support` role); the CRM
 * additionally applies its own rules to the forwarded identity.
 */
export function searchCustomersTool(deps: {
  readonly crm: CrmApi;
  readonly clock: Clock;
}): ToolDefinition<SearchCustomersInput, SearchCustomersOutput> {
  return defineTool({
    name: 'search_customers',
    version: '1.0.0',
    description:
      "Find customers when you do NOT know their customer id, by part of a name, an email or a phone number. Returns up to 10 matches with customer id, name and a masked email, nothing else. Once you have the id, use crm_lookup_contact to read that one customer's contact details; use lookup_order if the user gave an order id instead.",
    input,
    output,
    scopes: ['customers:read'],
    owner: 'crm-team',
    stateChanging: false,
    authorize: (principal) => hasRole(principal, SUPPORT_ROLE),
    downstream: 'crm',
    timeoutMs: 2_000,
    retry: { maxAttempts: 2, baseDelayMs: 100, maxDelayMs: 500 },
    auditFields: ['field', 'limit'],
    rateLimit: { capacity: 20, refillPerSecond: 2, per: ['principal'] },
    cost: { tokensIn: 80, tokensOut: 150 },
    execute: async (args, inv) => {
      const limit = args.limit ?? DEFAULT_LIMIT;
      const hits = await callDownstream(
        () =>
          deps.crm.searchCustomers(
            inv.ctx.tenant,
            {
              text: args.query,
              ...(args.field === undefined ? {} : { field: args.field }),
              limit: limit + 1,
            },
            crmViewer(inv.ctx.principal),
            inv.signal,
          ),
        (reason) =>
          reason === 'forbidden'
            ? { message: 'The CRM does not allow this search for the current user.', retryable: false }
            : undefined,
      );
      return {
        matches: hits.slice(0, limit).map((hit) => ({
          customer_id: hit.customer_id,
          name: hit.name,
          email_hint: maskEmail(hit.email),
        })),
        more_may_exist: hits.length > limit,
      };
    },
  });
}
