import { expect } from 'vitest';
import type { StoreDownstreams } from '../../services/downstreams/store-downstreams.js';
import type { StoryReport } from '../../services/demo/story.js';

/** One finished run of the refund story, as its tests see it. */
export interface RefundStoryRun {
  readonly report: StoryReport;
  /** Every line the story printed, in order. */
  readonly lines: readonly string[];
  /** The services the story ran against (the payment ledger is the ground truth of money moved). */
  readonly downstreams: StoreDownstreams;
}

/** A named fact about a finished run; `check` fails through `expect`. */
export interface RefundStoryExpectation {
  readonly name: string;
  check(run: RefundStoryRun): void | Promise<void>;
}

const calls = (run: RefundStoryRun, step: number) => run.report.steps.find((s) => s.step === step)!.calls;
const outcomes = (run: RefundStoryRun, step: number) => calls(run, step).map((c) => c.outcome);
/** How `field` in services/demo/print.ts prints a labelled value. */
const printed = (label: string, value: string) => `  ${label.padEnd(18)}${value}`;

/**
 * The facts the refund story establishes whatever it runs on (embedded mode or Kafka, Redis and
 * Postgres). Both demo tests register one `it` per entry, so the two modes are held to the same list.
 */
export const REFUND_STORY_EXPECTATIONS: readonly RefundStoryExpectation[] = [
  {
    name: 'step 1: the owner’s refund of O-5512 succeeds and books one payment',
    check(run) {
      expect(outcomes(run, 1)).toEqual(['SUCCESS']);
      expect(calls(run, 1)[0]!.attempts).toEqual(['ok']);
      expect(run.lines).toContain(printed('ledger O-5512', '1 payment(s)'));
    },
  },
  {
    name: "step 2: someone else's order is refused by authorization before the payment service",
    check(run) {
      expect(outcomes(run, 2)).toEqual(['UNAUTHORIZED']);
      expect(calls(run, 2)[0]!.attempts).toEqual([]);
      expect(run.lines).toContain(
        printed('payment service', '0 requests received (the refusal never reached it)'),
      );
    },
  },
  {
    name: 'step 3: $499.90 is refused by policy with the manager rule',
    check(run) {
      expect(outcomes(run, 3)).toEqual(['POLICY_VIOLATION']);
      expect(calls(run, 3)[0]!.message).toBe(
        'Support may refund at most $50 per order within 30 days, in total; with this refund the order would reach $499.9.',
      );
      expect(calls(run, 3)[0]!.attempts).toEqual([]);
    },
  },
  {
    name: 'step 4: a timeout after the payment applied is retried with the same key and pays once',
    check(run) {
      expect(outcomes(run, 4)).toEqual(['SUCCESS']);
      expect(calls(run, 4)[0]!.attempts).toEqual(['TIMEOUT', 'ok']);
      expect(run.report.step4PaymentRequests).toBe(2);
      expect(run.report.step4LedgerRows).toBe(1);
    },
  },
  {
    name: 'step 5: two refunds in one turn, one succeeds and one fails, each reported',
    check(run) {
      expect(outcomes(run, 5)).toEqual(['SUCCESS', 'EXECUTION_ERROR']);
      expect(calls(run, 5)[1]!.errorCode).toBe('CALLER_ERROR');
      expect(new Set(calls(run, 5).map((c) => c.callId)).size).toBe(2);
    },
  },
  {
    name: 'step 6: the audit answer names who refunded O-5512 and who tried to',
    check(run) {
      const { did, tried } = run.report.whoDidO5512;
      expect(did.map((e) => [e.principalId, e.outcome])).toEqual([['storefront:C-1', 'SUCCESS']]);
      expect(tried.map((e) => [e.principalId, e.outcome])).toEqual([
        ['storefront:C-2', 'UNAUTHORIZED'],
        ['support-desk:S-1', 'EXECUTION_ERROR'],
      ]);
      expect(run.lines.some((l) => l.startsWith('  hash chain:  intact ('))).toBe(true);
    },
  },
  {
    name: 'prints each step’s proposed call, decision and provider message, and the audit table',
    check(run) {
      const text = run.lines.join('\n');
      expect(text.match(/model proposes/g)).toHaveLength(6);
      expect(text.match(/toolgate decides/g)).toHaveLength(6);
      expect(text.match(/"role":"tool"/g)).toHaveLength(4);
      expect(text).toContain('"type":"tool_result"');
      expect(text).toContain('at (UTC)');
      expect(text).toContain('hash chain:  intact');
    },
  },
  {
    name: 'every money movement in the ledger is one the story expects',
    async check(run) {
      const ledger = await run.downstreams.payments.ledger({ tenant: 't1' });
      expect(ledger.map((r) => [r.order_id, r.amount_cents])).toEqual([
        ['O-5512', 4999],
        ['O-7788', 3450],
        ['O-9001', 2500],
      ]);
    },
  },
];
