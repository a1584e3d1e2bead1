import { describe, expect, it } from 'vitest';
import { MemoryJobStore } from '../../../libs/adapters/memory/job-store.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { ToolgateError } from '../../../libs/core/errors.js';
import {
  JobFailure,
  JobRunner,
  notReadyError,
  pollAfterMs,
  viewJob,
  type JobHandler,
} from '../../../libs/patterns/jobs/index.js';
import type { JobRecord } from '../../../libs/ports/job-store.js';

const T0 = Date.parse('2026-11-30T09:00:00.000Z');

function record(over: Partial<JobRecord> = {}): JobRecord {
  return {
    jobId: 'job_1',
    tenant: 't1',
    submissionKey: 'k1',
    kind: 'sum',
    params: {},
    submittedBy: 'p1',
    submittedAtMs: T0,
    queuedMs: 2_000,
    runMs: 40_000,
    ...over,
  };
}

describe('viewJob: the time-based state machine', () => {
  it('queued, then running with rising progress, then finishing at 100 % until an outcome is recorded', () => {
    const job = record();
    expect(viewJob(job, T0)).toMatchObject({ state: 'queued', progress: 0, remainingMs: 42_000 });
    expect(viewJob(job, T0 + 2_000)).toMatchObject({ state: 'running', progress: 0 });
    expect(viewJob(job, T0 + 12_000)).toMatchObject({
      state: 'running',
      progress: 0.25,
      remainingMs: 30_000,
    });
    expect(viewJob(job, T0 + 42_000)).toMatchObject({ state: 'running', progress: 1, remainingMs: 0 });
    const done = { ...job, outcome: { state: 'succeeded' as const, result: 1, finishedAtMs: T0 + 43_000 } };
    expect(viewJob(done, T0 + 50_000)).toMatchObject({
      state: 'succeeded',
      progress: 1,
      finishedAtMs: T0 + 43_000,
    });
    expect(viewJob(done, T0 + 50_000).pollAfterMs).toBeUndefined();
  });

  it('poll advice is the time left, but never under 5 s nor over 15 s', () => {
    expect(pollAfterMs(30_000)).toBe(15_000);
    expect(pollAfterMs(8_200)).toBe(9_000);
    expect(pollAfterMs(1_000)).toBe(5_000);
    expect(pollAfterMs(0)).toBe(5_000);
    expect(pollAfterMs(Number.NaN)).toBe(15_000);
  });

  it('"not ready" names the state, the progress and when to poll again', () => {
    const err = notReadyError(viewJob(record(), T0 + 12_000), 'check_job_status');
    expect(err).toBeInstanceOf(ToolgateError);
    expect(err.code).toBe('CALLER_ERROR');
    expect(err.retryable).toBe(true);
    expect(err.retryAfterMs).toBe(15_000);
    expect(err.message).toBe('Job job_1 is not ready yet (running, 25% done); poll again in 15 s.');
    expect(notReadyError(viewJob(record(), T0), 'check_job_status').message).toContain('(queued)');
  });
});

/** A handler that sums its params' numbers, counting how often it assembled a result. */
function summing(): JobHandler<{ numbers: number[] }, number> & { produced: number } {
  const handler = {
    kind: 'sum',
    produced: 0,
    plan: () => ({ queuedMs: 1_000, runMs: 30_000 }),
    async produce(params: { numbers: number[] }) {
      handler.produced += 1;
      return params.numbers.reduce((a, b) => a + b, 0);
    },
  };
  return handler;
}

const submission = (key: string, numbers = [1, 2, 3]) => ({
  tenant: 't1',
  submissionKey: key,
  kind: 'sum',
  params: { numbers },
  submittedBy: 'p1',
});

describe('JobRunner', () => {
  it('submit returns at once with a queued job, without waiting for any time to pass', async () => {
    const clock = new ManualClock(T0);
    const runner = new JobRunner(new MemoryJobStore(), clock, [summing()]);
    const { created, view } = await runner.submit(submission('k1'));
    expect(created).toBe(true);
    expect(view).toMatchObject({ state: 'queued', submittedAtMs: T0, readyAtMs: T0 + 31_000 });
    expect(clock.pendingSleepers).toBe(0);
  });

  it('a duplicate submission (same key) returns the same job, even with other parameters', async () => {
    const runner = new JobRunner(new MemoryJobStore(), new ManualClock(T0), [summing()]);
    const a = await runner.submit(submission('k1'));
    const b = await runner.submit(submission('k1', [9, 9]));
    const c = await runner.submit(submission('k2'));
    expect(b.created).toBe(false);
    expect(b.view.jobId).toBe(a.view.jobId);
    expect(c.view.jobId).not.toBe(a.view.jobId);
  });

  it('status progresses with time; the result is not ready before the end, then assembled once', async () => {
    const clock = new ManualClock(T0);
    const handler = summing();
    const runner = new JobRunner(new MemoryJobStore(), clock, [handler]);
    const { view } = await runner.submit(submission('k1'));
    const seen: string[] = [];
    for (let i = 0; i < 8; i++) {
      const s = (await runner.status('t1', view.jobId))!;
      seen.push(`${s.state}:${Math.floor(s.progress * 100)}`);
      if (s.state === 'running' && s.progress < 1) {
        expect(await runner.result('t1', view.jobId)).toMatchObject({ kind: 'not-ready' });
      }
      await clock.advance(5_000);
    }
    expect(seen).toEqual([
      'queued:0',
      'running:13',
      'running:30',
      'running:46',
      'running:63',
      'running:80',
      'running:96',
      'succeeded:100',
    ]);
    expect(await runner.result('t1', view.jobId)).toMatchObject({ kind: 'ready', result: 6 });
    expect(handler.produced).toBe(1);
  });

  it('a JobFailure fails the job for good; any other error records nothing and is retried on the next look', async () => {
    const clock = new ManualClock(T0);
    let fail: 'transient' | 'final' = 'transient';
    const flaky: JobHandler = {
      kind: 'sum',
      plan: () => ({ queuedMs: 0, runMs: 1_000 }),
      produce: () =>
        Promise.reject(fail === 'final' ? new JobFailure('The range has no data.') : new Error('reset')),
    };
    const runner = new JobRunner(new MemoryJobStore(), clock, [flaky]);
    const { view } = await runner.submit(submission('k1'));
    await clock.advance(1_000);
    await expect(runner.status('t1', view.jobId)).rejects.toBeInstanceOf(ToolgateError);
    fail = 'final';
    expect(await runner.status('t1', view.jobId)).toMatchObject({
      state: 'failed',
      error: 'The range has no data.',
    });
    expect(await runner.result('t1', view.jobId)).toMatchObject({ kind: 'failed' });
  });

  it("another tenant's job id is unknown; a kind without a handler is refused at submit", async () => {
    const runner = new JobRunner(new MemoryJobStore(), new ManualClock(T0), [summing()]);
    const { view } = await runner.submit(submission('k1'));
    expect(await runner.status('t2', view.jobId)).toBeUndefined();
    await expect(runner.submit({ ...submission('k3'), kind: 'nope' })).rejects.toThrow(TypeError);
  });
});
