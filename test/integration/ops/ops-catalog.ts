import { z } from 'zod';
import { ToolgateError } from '../../../libs/core/errors.js';
import { createPolicyEngine } from '../../../libs/policy/policy-engine.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import type { Catalog, CatalogFactory } from '../../../libs/catalog/catalog.js';

/**
 * The catalog the operations test runs in real executor and reconciler processes (loaded through
 * TOOLGATE_CATALOG_MODULE): three tools whose arguments decide what happens, so the test process can
 * produce every outcome the dashboards show without reaching into the executor:
 * - `ops_lookup` (read-only, scope ops:read, 5 calls per principal then RATE_LIMITED);
 * - `ops_pay` (state-changing, no retry safety): `mode: 'hang'` never answers, so the call times out
 *   after it may have applied → UNRESOLVED → dead letter → reconciliation case; `amount` above 100
 *   is refused by a business rule;
 * - `ops_flaky` (read-only, downstream `ops-flaky`): always answers 503, so its breaker opens.
 */
export const OPS_TOOLS = { lookup: 'ops_lookup', pay: 'ops_pay', flaky: 'ops_flaky' } as const;
export const OPS_SCOPE = 'ops:read';
export const OPS_LOOKUP_BUDGET = 5;

const ok = z.object({ ok: z.boolean(), echo: z.string() });

function opsTools(): ToolDefinition[] {
  return [
    defineTool({
      name: OPS_TOOLS.lookup,
      version: '1.0.0',
      description: 'Looks up an item by id. Read-only.',
      input: z.strictObject({ id: z.string().min(1).max(40).describe('Item id, e.g. "I-1".') }),
      output: ok,
      scopes: [OPS_SCOPE],
      owner: 'ops-test',
      stateChanging: false,
      downstream: 'ops-reads',
      timeoutMs: 2_000,
      auditFields: ['id'],
      rateLimit: { capacity: OPS_LOOKUP_BUDGET, refillPerSecond: 0.001, per: ['principal'] },
      cost: { tokensIn: 10, tokensOut: 10 },
      execute: (args) => Promise.resolve({ ok: true, echo: args.id }),
    }),
    defineTool({
      name: OPS_TOOLS.pay,
      version: '1.0.0',
      description: 'Pays an amount. Changes state.',
      input: z.strictObject({
        ref: z.string().min(1).max(40).describe('Payment reference.'),
        amount: z.number().positive().max(10_000).describe('Dollars.'),
        mode: z.enum(['ok', 'hang']).describe('How the fake downstream behaves.'),
      }),
      output: ok,
      scopes: [],
      owner: 'ops-test',
      stateChanging: true,
      destructive: false,
      downstream: 'ops-payments',
      timeoutMs: 300,
      retrySafety: { kind: 'none' },
      auditFields: ['ref', 'amount', 'mode'],
      execute: async (args, inv) => {
        if (args.mode === 'hang') {
          await new Promise<never>((_, reject) => {
            inv.signal.addEventListener('abort', () => reject(inv.signal.reason as Error), { once: true });
          });
        }
        return { ok: true, echo: args.ref };
      },
    }),
    defineTool({
      name: OPS_TOOLS.flaky,
      version: '1.0.0',
      description: 'Asks a downstream that is down.',
      input: z.strictObject({ q: z.string().min(1).max(40).describe('Query.') }),
      output: ok,
      scopes: [],
      owner: 'ops-test',
      stateChanging: false,
      downstream: 'ops-flaky',
      timeoutMs: 1_000,
      retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 20 },
      auditFields: ['q'],
      execute: () =>
        Promise.reject(new ToolgateError('SERVER_ERROR', 'The service is unavailable.', { retryable: true })),
    }),
  ] as ToolDefinition[];
}

/** The registry alone, for the SDK side (conflict keys) and for label checks. */
export function opsRegistry(): ToolRegistry {
  const registry = new ToolRegistry();
  for (const tool of opsTools()) registry.register(tool);
  return registry;
}

/** Payments per resource key in the last hour: read by the rules, so its metrics exist. */
const PAYMENTS_1H = {
  name: 'payments_1h',
  tools: [OPS_TOOLS.pay],
  measure: { count: true },
  per: ['resourceKey'],
  windowMs: 3_600_000,
} as const;

/**
 * The policy of version `version` with `limit` on one payment: the active one allows $100, the
 * shadow candidate only $5, so a $10 payment is a disagreement the dashboards show.
 */
function opsPolicy(version: string, limit: number) {
  return createPolicyEngine(
    {
      version,
      rules: [
        {
          id: 'ops-pay-limit',
          tool: OPS_TOOLS.pay,
          field: 'amount',
          check: { max: limit },
          reason: `Payments above $${limit} need a manager.`,
        },
      ],
      facts: [PAYMENTS_1H],
    },
    opsTools(),
  );
}

/** The catalog module's default export (see libs/runtime/catalog-module.ts). */
const createCatalog: CatalogFactory = (): Promise<Catalog> =>
  Promise.resolve({
    registry: opsRegistry(),
    policy: opsPolicy('ops-test-1', 100),
    shadowPolicy: opsPolicy('ops-test-2-candidate', 5),
    downstreamLimits: { 'ops-reads': { capacity: 100, refillPerSecond: 100 } },
  });

export default createCatalog;
