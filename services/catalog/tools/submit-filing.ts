import { z } from 'zod';
import { ToolgateError } from '../../../libs/core/errors.js';
import type { Logger } from '../../../libs/ports/logger.js';
import {
  StatusCheckAdapter,
  type StatusCheckTiming,
  type StatusCheckedSystem,
  type SubmitPath,
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
 * Timing for the fake legacy filing service's documented behaviour: it commits a submission within
 * 2 s of receiving it or abandons it (its LEGACY_FILING_COMMIT_WINDOW_MS default). A real system's
 * window comes from its operators; getting it wrong in the short direction is what would make a
 * "not found" lie, so round it up.
 */
export const LEGACY_FILING_TIMING: StatusCheckTiming = {
  lookupTimeoutMs: 2_000,
  submitTimeoutMs: 5_000,
  commitWindowMs: 2_000,
  settleMarginMs: 500,
  firstPollDelayMs: 200,
  maxPollDelayMs: 1_600,
  pollBudgetMs: 6_000,
  resubmits: 1,
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

const PATH_TO_CONFIRMED: Readonly<Record<SubmitPath, (typeof CONFIRMED_BY)[number]>> = {
  'already-applied': 'earlier_filing',
  submitted: 'submission',
  'confirmed-by-status-check': 'status_check',
  resubmitted: 'resubmission',
};

/**
 * `submit_filing` (state-changing, destructive: a filed return cannot be withdrawn): files one return
 * with the legacy filing service, which has no idempotency keys.
 *
 * - Retry safety `status-check` by the natural key (tenant, filer, form, period): before filing it
 *   looks for the same return and returns it instead of filing twice; a lost answer is settled by
 *   polling the status with backoff; a send proven absent after the service's commit window is sent
 *   once more; an outcome still unknown is UNRESOLVED — never "failed" — and the same check settles
 *   it later (the pipeline's final check, then the reconciler). See `StatusCheckAdapter`.
 * - Serialized per natural key (conflict key `<tenant>:filing:<filer>:<form>:<period>`): two calls
 *   for one return never race past the pre-check together.
 * - A return already filed with a different amount is refused (CALLER_ERROR, not retryable): this
 *   tool does not amend.
 * - Tenant from the verified context only. Timeout: the adapter's worst case plus 1 s, so the
 *   pipeline never cuts a poll short inside the commit window. One pipeline attempt: the adapter
 *   owns the retries.
 */
export function submitFilingTool(
  deps: SubmitFilingDeps,
): ToolDefinition<SubmitFilingInput, SubmitFilingOutput> {
  const system: StatusCheckedSystem<FilingSubmission, FilingRecord> = {
    lookup: (req, signal) => deps.client.lookup(req, signal),
    submit: (req, signal) => deps.client.submit(req, signal),
    // The natural key says which return; the amount says whether it is this one.
    isSameEffect: (req, rec) => rec.amountCents === req.amountCents,
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
        const answer = await adapter.check(submission(args, inv.ctx.tenant), inv.idempotencyKey, inv.signal);
        return answer.state === 'applied'
          ? { state: 'applied', result: toOutput(answer.record, 'status_check', false) }
          : answer;
      },
    },
    downstream: LEGACY_FILING_DOWNSTREAM,
    timeoutMs: adapter.worstCaseMs() + 1_000,
    retry: { maxAttempts: 1 },
    auditFields: ['filer_id', 'form_type', 'period', 'amount'],
    cost: { tokensIn: 120, tokensOut: 70 },
    execute: async (args, inv) => {
      const done = await adapter.submit(
        submission(args, inv.ctx.tenant),
        inv.idempotencyKey,
        inv.signal,
        inv.assertLive,
      );
      return toOutput(done.record, PATH_TO_CONFIRMED[done.path], done.path === 'already-applied');
    },
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
