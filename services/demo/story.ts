import type { Outcome } from '../../libs/core/outcome.js';
import type { ToolCallResult } from '../../libs/core/types.js';
import type { AuditRecord } from '../../libs/core/audit-record.js';
import type { WhoDidAnswer, WhoDidEntry } from '../../libs/ports/audit-store.js';
import type { Principal } from '../../libs/core/types.js';
import { formatDollars } from '../catalog/money.js';
import type { TurnOutcome } from '../sdk/index.js';
import type { DemoToolgate } from './demo-toolgate.js';
import { DEMO_PRINCIPALS } from './principals.js';
import { clip, clockTime, field, heading, table, type Out } from './print.js';
import { anthropicTurn, openAITurn, type ProposedCall } from './scripted-model.js';

/** One call of one step, as the story saw it. */
export interface CallReport {
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly outcome: Outcome;
  readonly errorCode?: string;
  readonly message?: string;
  /** Results of each tool invocation, from the audit record ('ok' or an error code). */
  readonly attempts: readonly string[];
  /** toolgate's call id (the audit record's). */
  readonly callId: string;
  /** The trace id the SDK gave the call's turn; its audit record must carry the same. */
  readonly traceId: string;
}

export interface StepReport {
  readonly step: number;
  readonly title: string;
  readonly calls: readonly CallReport[];
}

/** The facts the story establishes, for its test. */
export interface StoryReport {
  readonly mode: DemoToolgate['mode'];
  readonly steps: readonly StepReport[];
  /** Refund rows in the payment ledger for O-7788 after step 4 (the lost answer). */
  readonly step4LedgerRows: number;
  /** Refund requests the payment service received during step 4. */
  readonly step4PaymentRequests: number;
  /** "Who refunded O-5512, and who tried to?" */
  readonly whoDidO5512: WhoDidAnswer;
}

/** What each step's provider line says: whose tool-call format the scripted model speaks. */
export const PROVIDER_FORMATS = {
  openai: 'OpenAI: assistant tool_calls in; one "tool" message per call back',
  anthropic: 'Anthropic: tool_use blocks in; one user message of tool_result blocks back',
} as const;

const who: Record<string, string> = {
  [DEMO_PRINCIPALS.ana.id]: 'Ana (C-1) via the storefront assistant',
  [DEMO_PRINCIPALS.ben.id]: 'Ben (C-2) via the storefront assistant',
  [DEMO_PRINCIPALS.supportDesk.id]: 'the support-desk assistant (rep S-1)',
};

/**
 * The refund story, end to end through a running toolgate: six steps, each printing the
 * model's proposed call(s), toolgate's decision (from the result and its audit record) and the
 * provider-shaped tool message the agent appends to the conversation. The model's decisions are
 * scripted; everything after them is the real path: SDK → bus → executor → guard pipeline → fake
 * services → result and audit events → audit store.
 */
export async function runRefundStory(tg: DemoToolgate, out: Out): Promise<StoryReport> {
  const { ana, ben, supportDesk } = DEMO_PRINCIPALS;
  const steps: StepReport[] = [];
  const allCallIds: string[] = [];
  let task = 0;

  const turn = async (
    step: number,
    principal: Principal,
    said: string,
    provider: 'openai' | 'anthropic',
    calls: readonly ProposedCall[],
  ): Promise<CallReport[]> => {
    task += 1;
    out(`  ${who[principal.id] ?? principal.id}: "${said}"`);
    field(out, 'provider format', PROVIDER_FORMATS[provider]);
    for (const call of calls) field(out, 'model proposes', `${call.tool} ${JSON.stringify(call.args)}`);
    const turnId = `s${step}t${task}`;
    const request =
      provider === 'openai'
        ? openAITurn(turnId, calls)
        : anthropicTurn(turnId, 'I will issue both refunds now.', calls);
    const outcome = await tg.client.runTurn(request, {
      principal,
      taskId: `demo-${tg.mode}-${Date.now().toString(36)}-${task}`,
      step: 1,
    });
    const ids = outcome.calls.map((c) => c.published?.callId ?? '');
    allCallIds.push(...ids.filter(Boolean));
    await tg.awaitAudited(ids.filter(Boolean));
    const reports: CallReport[] = [];
    for (const [i, result] of outcome.results.entries()) {
      const audit = (await tg.auditStore.query({ callId: ids[i]!, limit: 1 }))[0]?.record;
      field(out, 'toolgate decides', decision(result, audit));
      reports.push({
        tool: calls[i]!.tool,
        args: calls[i]!.args,
        outcome: result.outcome,
        ...(result.error === undefined
          ? {}
          : { errorCode: result.error.code, message: result.error.message }),
        attempts: audit?.attempts.map((a) => a.result) ?? [],
        callId: ids[i]!,
        traceId: outcome.traceId,
      });
    }
    printMessages(out, outcome);
    return reports;
  };

  heading(out, 'Step 1 — the call itself: a legitimate refund');
  const s1 = await turn(1, ana, 'My blender arrived broken, order O-5512.', 'openai', [
    { tool: 'issue_refund', args: { order_id: 'O-5512', amount: 49.99, reason: 'damaged' } },
  ]);
  steps.push({ step: 1, title: 'a legitimate refund by the owner', calls: s1 });
  await printLedger(tg, out, 'O-5512');

  heading(out, "Step 2 — wrong order: someone else's order is refused");
  const before2 = tg.downstreams.faults.payments.received('refund');
  const s2 = await turn(2, ben, 'Refund order O-5512 please, the blender is broken.', 'openai', [
    { tool: 'issue_refund', args: { order_id: 'O-5512', amount: 49.99, reason: 'damaged' } },
  ]);
  steps.push({ step: 2, title: "someone else's order", calls: s2 });
  field(
    out,
    'payment service',
    `${tg.downstreams.faults.payments.received('refund') - before2} requests received (the refusal never reached it)`,
  );

  heading(out, 'Step 3 — too much money: $499.90 is stopped by a business rule');
  const s3 = await turn(3, supportDesk, "Ana's espresso machine (O-9001) arrived broken.", 'openai', [
    { tool: 'issue_refund', args: { order_id: 'O-9001', amount: 499.9, reason: 'damaged' } },
  ]);
  steps.push({ step: 3, title: '$499.90 refused by policy', calls: s3 });

  heading(out, 'Step 4 — the network blip: a timeout, retried with the same key, paid once');
  out('  (the payment service will apply the next refund and then never answer)');
  tg.downstreams.faults.payments.loseResponseNext(1, { silently: true });
  const before4 = tg.downstreams.faults.payments.received('refund');
  const s4 = await turn(4, supportDesk, "Ben's kettle (O-7788) arrived broken; refund it.", 'openai', [
    { tool: 'issue_refund', args: { order_id: 'O-7788', amount: 34.5, reason: 'damaged' } },
  ]);
  steps.push({ step: 4, title: 'a timeout retried with the same key', calls: s4 });
  const step4PaymentRequests = tg.downstreams.faults.payments.received('refund') - before4;
  field(out, 'attempts', s4[0]!.attempts.join(' → '));
  field(out, 'payment service', `${step4PaymentRequests} requests received with the same idempotency key`);
  const step4LedgerRows = await printLedger(tg, out, 'O-7788');

  heading(out, 'Step 5 — two actions at once: two refunds in one turn, reported separately');
  const s5 = await turn(
    5,
    supportDesk,
    'Ana also wants $25 back on O-9001 for a scratch, and $10 on O-5512 for the late delivery.',
    'anthropic',
    [
      { tool: 'issue_refund', args: { order_id: 'O-9001', amount: 25, reason: 'damaged' } },
      { tool: 'issue_refund', args: { order_id: 'O-5512', amount: 10, reason: 'late' } },
    ],
  );
  steps.push({ step: 5, title: 'two parallel refunds, one fails', calls: s5 });

  heading(out, 'Step 6 — after the fact: who refunded O-5512, and who tried to?');
  await tg.awaitAudited(allCallIds);
  const answer = await tg.auditStore.whoDid({ tool: 'issue_refund', resource: 'O-5512' }, { tenant: 't1' });
  out('  auditStore.whoDid({ tool: "issue_refund", resource: "O-5512" }) — one query:');
  out('');
  const rows = [...answer.did, ...answer.tried]
    .sort((a, b) => a.atMs - b.atMs)
    .map((e) => [clockTime(e.atMs), e.label, e.principalId, e.outcome, reasonOf(e)]);
  table(out, ['at (UTC)', 'label', 'principal', 'outcome', 'stage: reason'], rows);
  out('');
  out(`  refunded by: ${answer.did.map((e) => e.principalId).join(', ') || 'nobody'}`);
  out(`  tried:       ${[...new Set(answer.tried.map((e) => e.principalId))].join(', ') || 'nobody'}`);
  const verified = await tg.auditStore.verify({ chain: 't1' });
  out(
    `  hash chain:  ${verified.ok ? `intact (${verified.checked} records checked)` : `BROKEN: ${verified.detail}`}`,
  );

  return { mode: tg.mode, steps, step4LedgerRows, step4PaymentRequests, whoDidO5512: answer };
}

function decision(result: ToolCallResult, audit: AuditRecord | undefined): string {
  const stop = audit?.decisions.find((d) => d.decision !== 'pass');
  const path =
    audit === undefined ? '' : `\n${audit.decisions.map((d) => `${d.stage} ${mark(d.decision)}`).join('  ')}`;
  if (result.outcome === 'SUCCESS' || result.outcome === 'DUPLICATE') {
    return `${result.outcome} after ${result.toolInvocations} tool invocation(s)${path}`;
  }
  const where = stop === undefined ? '' : ` at ${stop.stage}`;
  return `${result.outcome}${where} (${result.error?.code ?? '?'}): ${result.error?.message ?? ''}${path}`;
}

function mark(decision: string): string {
  return decision === 'pass' ? '✓' : decision === 'refuse' ? '✗' : '⇥';
}

/** OpenAI: one `tool` message per call. Anthropic: ONE user message, one `tool_result` block per call. */
function printMessages(out: Out, outcome: TurnOutcome): void {
  if (outcome.provider === 'openai') {
    for (const message of outcome.messages) field(out, 'tool message', clip(JSON.stringify(message), 400));
    return;
  }
  for (const message of outcome.messages) {
    const blocks = message.content.map((block) => `  ${clip(JSON.stringify(block), 380)}`);
    field(out, 'user message', [`{"role":"user","content":[`, ...blocks, ']}'].join('\n'));
  }
}

async function printLedger(tg: DemoToolgate, out: Out, orderId: string): Promise<number> {
  const rows = await tg.downstreams.payments.ledger({ tenant: 't1', order_id: orderId });
  const lines = rows.map(
    (r) => `${r.refund_id}  ${formatDollars(r.amount_cents)}  key ${r.idempotency_key.slice(0, 24)}…`,
  );
  field(out, `ledger ${orderId}`, [`${rows.length} payment(s)`, ...lines].join('\n'));
  return rows.length;
}

function reasonOf(entry: WhoDidEntry): string {
  if (entry.label === 'did') return '—';
  return clip(`${entry.stage ?? '?'}: ${entry.reason ?? entry.errorCode ?? ''}`, 90);
}
