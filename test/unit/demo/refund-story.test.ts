import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DemoToolgate } from '../../../services/demo/demo-toolgate.js';
import { startEmbeddedDemo } from '../../../services/demo/embedded-demo.js';
import { runRefundStory, type StoryReport } from '../../../services/demo/story.js';

let toolgate: DemoToolgate;
let report: StoryReport;
const lines: string[] = [];

beforeAll(async () => {
  toolgate = await startEmbeddedDemo();
  report = await runRefundStory(toolgate, (line) => lines.push(line));
}, 30_000);

afterAll(async () => {
  await toolgate.stop();
});

const outcomes = (step: number) => report.steps.find((s) => s.step === step)!.calls.map((c) => c.outcome);

describe('the refund story in embedded mode', () => {
  it('step 1: the owner’s refund of O-5512 succeeds', () => {
    expect(outcomes(1)).toEqual(['SUCCESS']);
  });

  it("step 2: someone else's order is refused by authorization", () => {
    expect(outcomes(2)).toEqual(['UNAUTHORIZED']);
    expect(lines).toContain('  payment service   0 requests received (the refusal never reached it)');
  });

  it('step 3: $499.90 is refused by policy with the manager rule', () => {
    expect(outcomes(3)).toEqual(['POLICY_VIOLATION']);
    expect(report.steps[2]!.calls[0]!.message).toBe('Refunds above $50 need a manager.');
  });

  it('step 4: a timeout after the payment applied is retried with the same key and pays once', () => {
    expect(outcomes(4)).toEqual(['SUCCESS']);
    expect(report.steps[3]!.calls[0]!.attempts).toEqual(['TIMEOUT', 'ok']);
    expect(report.step4PaymentRequests).toBe(2);
    expect(report.step4LedgerRows).toBe(1);
  });

  it('step 5: two refunds in one turn, one succeeds and one fails, each reported', () => {
    expect(outcomes(5)).toEqual(['SUCCESS', 'EXECUTION_ERROR']);
    expect(report.steps[4]!.calls[1]!.errorCode).toBe('CALLER_ERROR');
  });

  it('step 6: the audit answer names who refunded O-5512 and who tried to', () => {
    const { did, tried } = report.whoDidO5512;
    expect(did.map((e) => [e.principalId, e.outcome])).toEqual([['storefront:C-1', 'SUCCESS']]);
    expect(tried.map((e) => [e.principalId, e.outcome])).toEqual([
      ['storefront:C-2', 'UNAUTHORIZED'],
      ['support-desk:S-1', 'EXECUTION_ERROR'],
    ]);
  });

  it('prints each step’s proposed call, decision and provider message, and the audit table', () => {
    const text = lines.join('\n');
    expect(text.match(/model proposes/g)).toHaveLength(6);
    expect(text.match(/toolgate decides/g)).toHaveLength(6);
    expect(text.match(/"role":"tool"/g)).toHaveLength(4);
    expect(text).toContain('"type":"tool_result"');
    expect(text).toContain('at (UTC)');
    expect(text).toContain('hash chain:  intact');
  });

  it('every money movement in the ledger is one the story expects', async () => {
    const ledger = await toolgate.downstreams.payments.ledger({ tenant: 't1' });
    expect(ledger.map((r) => [r.order_id, r.amount_cents])).toEqual([
      ['O-5512', 4999],
      ['O-7788', 3450],
      ['O-9001', 2500],
    ]);
  });
});
