import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryJobStore } from '../../../libs/adapters/memory/job-store.js';
import { PostgresJobStore } from '../../../libs/adapters/postgres/job-store.js';
import { migrate } from '../../../libs/adapters/postgres/migrate.js';
import type { JobStore, NewJob } from '../../../libs/ports/job-store.js';
import { uniqueName } from '../../helpers/names.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';

/** The same expectations of both job stores: the memory default and Postgres. */
const adapters: {
  name: string;
  create(): Promise<{ store: JobStore; peer: JobStore; close(): Promise<void> }>;
}[] = [
  {
    name: 'memory',
    create() {
      const store = new MemoryJobStore();
      return Promise.resolve({ store, peer: store, close: () => Promise.resolve() });
    },
  },
  {
    name: 'postgres',
    async create() {
      const a: TestSchema = await createTestSchema('jobs');
      await migrate(a.pool);
      return {
        store: new PostgresJobStore(a.pool),
        peer: new PostgresJobStore(a.pool),
        close: () => a.drop(),
      };
    },
  },
];

const job = (over: Partial<NewJob> = {}): NewJob => ({
  tenant: 't1',
  submissionKey: uniqueName('sub'),
  kind: 'report:refunds_by_reason',
  params: { from: '2026-11-01', to: '2026-11-30', nested: { list: [1, 2] } },
  submittedBy: 'agent:purchasing',
  onBehalfOf: 'W-1',
  submittedAtMs: 1_764_493_200_000,
  queuedMs: 2_000,
  runMs: 33_000,
  ...over,
});

describe.each(adapters)('JobStore: $name', (adapter) => {
  let h: Awaited<ReturnType<(typeof adapters)[number]['create']>>;
  beforeAll(async () => {
    h = await adapter.create();
  });
  afterAll(async () => {
    await h.close();
  });

  it('stores a job under a new id and reads it back whole', async () => {
    const input = job();
    const { created, job: stored } = await h.store.submit(input);
    expect(created).toBe(true);
    expect(stored).toEqual({ ...input, jobId: stored.jobId });
    expect(await h.peer.get('t1', stored.jobId)).toEqual(stored);
  });

  it('a second submit with the same key returns the first job unchanged', async () => {
    const first = await h.store.submit(job({ submissionKey: 'dup-key' }));
    const again = await h.peer.submit(job({ submissionKey: 'dup-key', params: { other: true } }));
    expect(again).toEqual({ created: false, job: first.job });
  });

  it('of 10 concurrent submits of one key exactly one creates, and all get its id', async () => {
    const key = uniqueName('race');
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 === 0 ? h.store : h.peer).submit(job({ submissionKey: key })),
      ),
    );
    expect(answers.filter((a) => a.created)).toHaveLength(1);
    expect(new Set(answers.map((a) => a.job.jobId)).size).toBe(1);
  });

  it('the same key in another tenant is another job; a job is invisible to other tenants', async () => {
    const a = await h.store.submit(job({ submissionKey: 'shared-key-x' }));
    const b = await h.store.submit(job({ tenant: 't2', submissionKey: 'shared-key-x' }));
    expect(b.created).toBe(true);
    expect(b.job.jobId).not.toBe(a.job.jobId);
    expect(await h.store.get('t2', a.job.jobId)).toBeUndefined();
  });

  it('the first outcome wins; later finishes change nothing', async () => {
    const { job: stored } = await h.store.submit(job());
    const won = await h.store.finish('t1', stored.jobId, {
      state: 'succeeded',
      result: { rows: [1] },
      finishedAtMs: 5,
    });
    const lost = await h.peer.finish('t1', stored.jobId, { state: 'failed', error: 'late', finishedAtMs: 6 });
    expect(won?.outcome).toEqual({ state: 'succeeded', result: { rows: [1] }, finishedAtMs: 5 });
    expect(lost).toEqual(won);
    expect(
      await h.store.finish('t2', stored.jobId, { state: 'failed', error: 'x', finishedAtMs: 7 }),
    ).toBeUndefined();
  });

  it('a job without an on-behalf-of user round-trips without one', async () => {
    const input: NewJob = { ...job() };
    delete (input as { onBehalfOf?: string }).onBehalfOf;
    const { job: stored } = await h.store.submit(input);
    expect(stored.onBehalfOf).toBeUndefined();
    expect((await h.store.get('t1', stored.jobId))?.onBehalfOf).toBeUndefined();
  });
});
