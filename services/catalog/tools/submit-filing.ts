import { z } from 'zod';
import { ToolgateError } from '../../../libs/core/errors.js';
import type { Logger } from '../../../libs/ports/logger.js';
import {
  StatusCheckAdapter,
  type StatusCheckTiming,
  type StatusCheckedSystem,
} from '../../../libs/integrations/status-check-adapter.js';
import type { SubmissionLedger } from '../../../libs/integrations/submission-ledger.js';
import type { Clock } from '../../../libs/core/clock.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import {
  FORM_TYPES,
  LEGACY_FILING_DOWNSTREAM,
  type FilingRecord,
  type FilingSubmission,
  type LegacyFilingClient,
} from '../../legacy-filing/client.js';

const input = z.strictObject({
  filer_id: z
    .string()
    .regex(/^\d{9}$/)
    .describe("The filer's 9-digit registration number, digits only, exactly as the user gave it."),
  filer_name: z
    .string()
    .min(1)
    .max(120)
    .describe("The filer's registered name as the user gave it (1-120 characters)."),
  form_type: z
    .enum(FORM_TYPES)
    .describe(
      "Which return: 'vat_return' (quarterly VAT), 'payroll_annual' (employer's annual payroll return) or 'corporate_tax'.",
    ),
  period: z
    .string()
    .regex(/^\d{4}-Q[1-4]$/)
    .describe(
      "The quarter the return covers, e.g. '2025-Q3'. Only the current or an earlier quarter can be filed.",
    ),
  amount: z
    .number()
    .min(0)
    .max(100_000_000_000)
    .multipleOf(0.01)
    .describe(
      'The amount due in US dollars with at most 2 decimals, e.g. 1250.40, as the user confirmed it.',
    ),
});

/** How the filing came to exist, for the model and the user. */
const CONFIRMED_BY = ['submission', 'status_check', 'earlier_filing', 'resubmission'] as const;

const output = z.object({
  confirmation_number: z.string(),
  filer_id: z.string(),
  form_type: z.enum(FORM_TYPES),
  period: z.string(),
  amount: z.number(),
  received_at: z.string(),
  status: z.literal('received'),
  /** True when the filing existed before this call: nothing new was filed. */
  already_filed: z.boolean(),
  confirmed_by: z.enum(CONFIRMED_BY),
});

export type SubmitFilingInput = z.infer<typeof input>;
export type SubmitFilingOutput = z.infer<typeof output>;

/**
 * Timing for the fake legacy filing service: a submission is given 5 s to be recorded (the service
 * honours the deadline it is sent with), "not found" is believed 500 ms past it (the clocks of this
 * process and the service's database may differ by that much), and a lookup gets 2 s.
 */
export const LEGACY_FILING_TIMING: StatusCheckTiming = {
  lookupTimeoutMs: 2_000,
  submitTimeoutMs: 5_000,
  settleMarginMs: 500,
};

/** What `submit_filing` needs. */
export interface SubmitFilingDeps {
  readonly client: LegacyFilingClient;
  /** Shared by every executor and the reconciler (Postgres in production). */
  readonly ledger: SubmissionLedger;
  readonly clock: Clock;
  /** Default {@link LEGACY_FILING_TIMING}. */
  readonly timing?: StatusCheckTiming;
  readonly logger?: Logger;
}

/**
 * `submit_filing` (state-changing, destructive: a filed return cannot be withdrawn): files one return
 * with the legacy filing service, which has no idempotency keys.
 *
 * - Retry safety `status-check` by the natural key (tenant, filer, form, period), run by the
 *   executor: it looks for the same return first and returns it instead of filing twice; a lost
 *   answer is settled by looking again until the answer is certain; a send proven absent is sent
 *   once more (two attempts); an outcome still unknown is UNRESOLVED — never "failed" — and the same
 *   check settles it later (the reconciler). Every submission carries a deadline the service
 *   honours, so "not found" after it is the truth. See `StatusCheckAdapter`.
 * - Serialized per natural key (conflict key `<tenant>:filing:<filer>:<form>:<period>`): two calls
 *   for one return never race past the check together.
 * - A return already filed with a different amount is refused (CALLER_ERROR, not retryable): this
 *   tool does not amend.
 * - Tenant from the verified context only. Timeout: the adapter's longest request plus 1 s.
 */
export function submitFilingTool(
  deps: SubmitFilingDeps,
): ToolDefinition<SubmitFilingInput, SubmitFilingOutput> {
  const system: StatusCheckedSystem<FilingSubmission, FilingRecord> = {
    lookup: (req, signal) => deps.client.lookup(req, signal),
    submit: (req, notAfterMs, signal) => deps.client.submit(req, notAfterMs, signal),
    // The natural key says which return; the amount says whether it is this one.
    isSameEffect: (req, rec) => rec.amountCents === req.amountCents,
    naturalKey: (req) => `${req.tenant}:${req.filerId}:${req.formType}:${req.period}`,
    conflict: (req, existing) =>
      new ToolgateError(
        'CALLER_ERROR',
        `A ${req.formType} return for ${req.period} was already filed for this filer (confirmation ${existing[0]?.confirmationNumber ?? 'unknown'}) with a different amount. This tool cannot amend a filed return.`,
        { retryable: false },
      ),
  };
  const adapter = new StatusCheckAdapter(system, {
    system: LEGACY_FILING_DOWNSTREAM,
    clock: deps.clock,
    ledger: deps.ledger,
    timing: deps.timing ?? LEGACY_FILING_TIMING,
    ...(deps.logger === undefined ? {} : { logger: deps.logger }),
  });
  const submission = (args: SubmitFilingInput, tenant: string): FilingSubmission => ({
    tenant,
    filerId: args.filer_id,
    filerName: args.filer_name,
    formType: args.form_type,
    period: args.period,
    amountCents: Math.round(args.amount * 100),
  });

  return defineTool({
    name: 'submit_filing',
    version: '1.0.0',
    description:
      'File one tax return (VAT, annual payroll or corporate tax) for one filer and quarter with the government filing service, after the user has confirmed the figures. It is safe against double filing: if the same return was already filed it returns that filing instead. A filed return cannot be withdrawn or amended with this tool. If the outcome is reported as unresolved, do NOT call it again: tell the user the filing is being checked.',
    input,
    output,
    scopes: ['filings:write'],
    owner: 'tax-integrations',
    destructive: true,
    stateChanging: true,
    conflictKey: (args, ctx) => `${ctx.tenant}:filing:${args.filer_id}:${args.form_type}:${args.period}`,
    retrySafety: {
      kind: 'status-check',
      check: async (args, inv) => {
        const answer = await adapter.check(submission(args, inv.ctx.tenant), inv);
        if (answer.state !== 'applied') return answer;
        // inv.attempt: how many sends this execution made before the check.
        const via =
          inv.attempt === 0 ? 'earlier_filing' : inv.attempt === 1 ? 'status_check' : 'resubmission';
        return { state: 'applied', result: toOutput(answer.record, via, inv.attempt === 0) };
      },
      apply: async (args, inv) => {
        const record = await adapter.apply(submission(args, inv.ctx.tenant), inv);
        return toOutput(record, inv.attempt === 1 ? 'submission' : 'resubmission', false);
      },
    },
    downstream: LEGACY_FILING_DOWNSTREAM,
    timeoutMs: adapter.worstCaseMs() + 1_000,
    // A second attempt only ever follows a status check that proved the first absent.
    retry: { maxAttempts: 2, baseDelayMs: 200, maxDelayMs: 1_000 },
    auditFields: ['filer_id', 'form_type', 'period', 'amount'],
    // Which return, for whom and which quarter, and the amount due: a filed return cannot be withdrawn.
    decisiveFields: ['amount', 'filer_id', 'form_type', 'period'],
    cost: { tokensIn: 120, tokensOut: 70 },
  });
}

function toOutput(
  rec: FilingRecord,
  confirmedBy: (typeof CONFIRMED_BY)[number],
  alreadyFiled: boolean,
): SubmitFilingOutput {
  return {
    confirmation_number: rec.confirmationNumber,
    filer_id: rec.filerId,
    form_type: rec.formType,
    period: rec.period,
    amount: rec.amountCents / 100,
    received_at: rec.receivedAt,
    status: rec.status,
    already_filed: alreadyFiled,
    confirmed_by: confirmedBy,
  };
}
