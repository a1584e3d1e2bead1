import { z } from 'zod';
import type { Clock } from '../../../libs/core/clock.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { CONTACT_CHANNELS, type CrmApi } from '../../downstreams/crm/crm-api.js';
import { callDownstream } from '../downstream-failure.js';
import { actingIdentities, crmViewer, hasRole, SUPPORT_ROLE } from '../principal-facts.js';
import { customerIdField } from './fields.js';

const input = z.strictObject({ customer_id: customerIdField });

/**
 * The allow-list of what the model may see. The CRM answers with everything it holds (date of birth,
 * SSN digits, internal notes, risk score); output validation strips every key not declared here, so
 * those never reach the model, the result event or the audit record.
 */
const output = z.object({
  customer_id: z.string(),
  name: z.string(),
  email: z.string(),
  phone: z.string(),
  shipping_address: z.string(),
  preferred_channel: z.enum(CONTACT_CHANNELS),
});

export type CrmLookupContactInput = z.infer<typeof input>;
export type CrmLookupContactOutput = z.infer<typeof output>;

/**
 * `crm_lookup_contact` (read-only): one customer's contact details by customer id. Allowed for the
 * customer themself (or an agent acting for them) and for support staff. The call is made with the
 * forwarded identity ({@link crmViewer}), so the CRM's own access control applies as if the user
 * asked.
 */
export function crmLookupContactTool(deps: {
  readonly crm: CrmApi;
  readonly clock: Clock;
}): ToolDefinition<CrmLookupContactInput, CrmLookupContactOutput> {
  return defineTool({
    name: 'crm_lookup_contact',
    version: '1.0.0',
    description:
      "Read one customer's contact details (name, email, phone, shipping address, preferred channel) when you already have their customer id, e.g. to confirm where a replacement ships or how to reach them. Do NOT use it to find a customer by name, email or phone; use search_customers for that. It never returns payment or identity documents.",
    input,
    output,
    scopes: ['crm:read'],
    owner: 'crm-team',
    stateChanging: false,
    authorize: (principal, args) =>
      actingIdentities(principal).includes(args.customer_id) || hasRole(principal, SUPPORT_ROLE),
    downstream: 'crm',
    timeoutMs: 2_000,
    retry: { maxAttempts: 2, baseDelayMs: 100, maxDelayMs: 500 },
    auditFields: ['customer_id'],
    rateLimit: { capacity: 20, refillPerSecond: 2, per: ['principal'] },
    cost: { tokensIn: 70, tokensOut: 90 },
    execute: (args, inv) =>
      callDownstream(
        () => deps.crm.getContact(inv.ctx.tenant, args.customer_id, crmViewer(inv.ctx.principal), inv.signal),
        (reason) => {
          if (reason === 'not_found') {
            return {
              message: `No customer ${args.customer_id} exists.`,
              suggestedFix: 'Use the customer id from lookup_order or search_customers.',
            };
          }
          if (reason === 'forbidden') {
            return {
              message: 'The CRM does not allow the current user to read this contact.',
              retryable: false,
            };
          }
          return undefined;
        },
      ),
  });
}
