import { afterEach, describe, expect, it } from 'vitest';
import type { ToolInvocation } from '../../../libs/registry/tool-definition.js';
import type { ExecutionContext } from '../../../libs/core/types.js';
import {
  buyer,
  ctxFor,
  otherBuyer,
  patternHarness,
  toolCall,
  type PatternHarness,
} from './pattern-harness.js';

let h: PatternHarness;
afterEach(() => h.close());

const RANGE = { report_type: 'refunds_by_reason', from: '2026-11-01', to: '2026-11-30' };

async function submit(args: Record<string, unknown> = RANGE, ctx: ExecutionContext = ctxFor(buyer)) {
  const { result } = await h.run(toolCall('submit_report_job', args), ctx);
  expect(result.outcome).toBe('SUCCESS');
  return result.payload as {
    job_id: string;
    status: string;
    estimated_seconds: number;
    poll_after_seconds: number;
  };
}

const status = (jobId: string, principal = buyer) =>
  h.run(toolCall('check_job_status', { job_id: jobId }), ctxFor(principal));
const fetchResult = (jobId: string, principal = buyer) =>
  h.run(toolCall('get_job_result', { job_id: jobId }), ctxFor(principal));

async function refund(orderId: string, cents: number, reason: string, key: string) {
  await h.downstreams.payments.refund({
    tenant: 't1',
    order_id: orderId,
    amount_cents: cents,
    reason: reason as 'damaged',
    idempotency_key: key,
  });
}

describe('report jobs: submit, poll, retrieve through the guard pipeline', () => {
  it('submit returns a job id at once (no time passes, nothing waits), queued, with its cadence', async () => {
    h = patternHarness();
    const job = await submit();
    expect(job.job_id).toMatch(/^job_/);
    expect(job).toMatchObject({ status: 'queued', estimated_seconds: 35, poll_after_seconds: 15 });
    expect(h.clock.now()).toBe(Date.parse('2026-11-30T09:00:00.000Z'));
    expect(h.clock.pendingSleepers).toBe(0);
  });

  it('status progresses from queued through running to succeeded as time passes', async () => {
    h = patternHarness();
    const { job_id } = await submit();
    const states: string[] = [];
    for (let i = 0; i < 9; i++) {
      const { result } = await status(job_id);
      expect(result.outcome).toBe('SUCCESS');
      const s = result.payload as { status: string; progress_percent: number };
      states.push(`${s.status}:${s.progress_percent}`);
      await h.clock.advance(5_000);
    }
    expect(states[0]).toBe('queued:0');
    expect(states.at(-1)).toBe('succeeded:100');
    const running = states.filter((s) => s.startsWith('running')).map((s) => Number(s.split(':')[1]));
    expect(running.length).toBeGreaterThan(3);
    for (let i = 1; i < running.length; i++) expect(running[i]!).toBeGreaterThan(running[i - 1]!);
  });

  it('retrieving before the job is done is refused: not ready, poll again in N s', async () => {
    h = patternHarness();
    const { job_id } = await submit();
    await h.clock.advance(12_000);
    const { result } = await fetchResult(job_id);
    expect(result.outcome).toBe('EXECUTION_ERROR');
    expect(result.error).toMatchObject({ code: 'CALLER_ERROR', retryable: true, retryAfterMs: 15_000 });
    expect(result.error?.message).toMatch(
      /^Job job_\S+ is not ready yet \(running, \d+% done\); poll again in 15 s\.$/,
    );
    await h.clock.advance(40_000);
    expect((await fetchResult(job_id)).result.outcome).toBe('SUCCESS');
  });

  it('the report counts the refunds made before submission, grouped and totalled', async () => {
    h = patternHarness();
    await refund('O-9001', 10_000, 'damaged', 'r1');
    await refund('O-9001', 2_500, 'late', 'r2');
    await refund('O-5512', 4_999, 'damaged', 'r3');
    const { job_id } = await submit();
    await h.clock.advance(1_000);
    await refund('O-7788', 3_450, 'late', 'r4');
    await h.clock.advance(60_000);
    const { result } = await fetchResult(job_id);
    expect(result.payload).toMatchObject({
      job_id,
      report_type: 'refunds_by_reason',
      as_of: '2026-11-30T09:00:00.000Z',
      rows: [
        { key: 'damaged', count: 2, amount: 149.99 },
        { key: 'late', count: 1, amount: 25 },
      ],
      total_count: 3,
      total_amount: 174.99,
    });
  });

  it('a duplicate submit (the same call redelivered) returns the same job id; one job exists', async () => {
    h = patternHarness();
    const call = toolCall('submit_report_job', RANGE);
    const ctx = ctxFor(buyer);
    const first = await h.run(call, ctx);
    const again = await h.run(call, ctx);
    expect(again.result.outcome).toBe('DUPLICATE');
    expect((again.result.payload as { job_id: string }).job_id).toBe(
      (first.result.payload as { job_id: string }).job_id,
    );
  });

  it('the job store itself dedupes on the idempotency key (a retry after the record expired)', async () => {
    h = patternHarness();
    const resolved = h.registry.resolve('submit_report_job', { tenant: 't1' });
    if (!resolved.ok) throw resolved.error;
    const inv: ToolInvocation = {
      ctx: ctxFor(buyer),
      idempotencyKey: 'idem-report-1',
      attempt: 1,
      signal: new AbortController().signal,
      assertLive: () => undefined,
    };
    const a = (await resolved.tool.execute(RANGE, inv)) as { job_id: string };
    const b = (await resolved.tool.execute(RANGE, { ...inv, attempt: 2 })) as { job_id: string };
    const c = (await resolved.tool.execute(RANGE, { ...inv, idempotencyKey: 'idem-report-2' })) as {
      job_id: string;
    };
    expect(b.job_id).toBe(a.job_id);
    expect(c.job_id).not.toBe(a.job_id);
  });

  it('another principal cannot see or fetch the job (the same answer as for an unknown id)', async () => {
    h = patternHarness();
    const { job_id } = await submit();
    await h.clock.advance(60_000);
    const seen = await status(job_id, otherBuyer);
    expect(seen.result.error?.message).toBe(`There is no job ${job_id} of yours.`);
    const fetched = await fetchResult(job_id, otherBuyer);
    expect(fetched.result.error?.message).toBe(`There is no job ${job_id} of yours.`);
  });

  it('a runaway poll loop is stopped by the rate limit, and let through again after a wait', async () => {
    h = patternHarness();
    const { job_id } = await submit();
    const outcomes: string[] = [];
    for (let i = 0; i < 31; i++) outcomes.push((await status(job_id)).result.outcome);
    expect(outcomes.slice(0, 30).every((o) => o === 'SUCCESS')).toBe(true);
    expect(outcomes[30]).toBe('RATE_LIMITED');
    await h.clock.advance(1_000);
    expect((await status(job_id)).result.outcome).toBe('SUCCESS');
  });

  it('a bad range is refused at submit and no job is created', async () => {
    h = patternHarness();
    const backwards = await h.run(
      toolCall('submit_report_job', { ...RANGE, from: '2026-12-01', to: '2026-11-01' }),
      ctxFor(buyer),
    );
    expect(backwards.result.error?.message).toContain('is not 1 to 366 days long');
    const notADate = await h.run(
      toolCall('submit_report_job', { ...RANGE, to: '2026-02-30' }),
      ctxFor(buyer),
    );
    expect(notADate.result.outcome).toBe('SCHEMA_INVALID');
  });

  it('every report tool states the polling cadence in its description', () => {
    h = patternHarness();
    for (const name of ['submit_report_job', 'check_job_status', 'get_job_result']) {
      const resolved = h.registry.resolve(name, { tenant: 't1' });
      if (!resolved.ok) throw resolved.error;
      expect(resolved.tool.description).toContain(
        'Poll no more than every 5 s; a typical run takes 30–60 s.',
      );
    }
  });
});
