import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresJobStore } from '../../../libs/adapters/postgres/job-store.js';
import { migrate } from '../../../libs/adapters/postgres/migrate.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import type { ExecutionContext, Principal } from '../../../libs/core/types.js';
import type { ToolDefinition, ToolInvocation } from '../../../libs/registry/tool-definition.js';
import { reportJobTools } from '../../../services/catalog/tools/report-job-tools.js';
import { createMemoryDownstreams } from '../../../services/downstreams/memory-downstreams.js';
import type { PaymentsApi } from '../../../services/downstreams/payments/payments-api.js';
import { uniqueName } from '../../helpers/names.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';

const T0 = Date.parse('2026-11-30T09:00:00.000Z');
const analyst: Principal = {
  id: 'agent:finance',
  tenant: 't1',
  kind: 'agent',
  onBehalfOf: 'F-1',
  roles: ['finance'],
  scopes: ['reports:read'],
};
const ctx: ExecutionContext = {
  principal: analyst,
  tenant: 't1',
  taskId: 'task-1',
  step: 0,
  index: 0,
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
};
const inv = (idempotencyKey: string): ToolInvocation => ({
  ctx,
  idempotencyKey,
  attempt: 1,
  signal: new AbortController().signal,
  assertLive: () => undefined,
});

/** One executor's report tools over the shared Postgres job table and payment ledger, on one clock. */
function toolsOf(
  store: PostgresJobStore,
  payments: PaymentsApi,
  clock: ManualClock,
): Record<string, ToolDefinition> {
  return Object.fromEntries(reportJobTools({ jobs: store, payments, clock }).map((t) => [t.name, t]));
}

describe('report jobs on Postgres, submitted on one executor and polled on another', () => {
  let schema: TestSchema;
  let clock: ManualClock;
  let a: Record<string, ToolDefinition>;
  let b: Record<string, ToolDefinition>;

  beforeAll(async () => {
    schema = await createTestSchema('report_jobs');
    await migrate(schema.pool);
    clock = new ManualClock(T0);
    const { payments } = createMemoryDownstreams({ clock });
    await payments.refund({
      tenant: 't1',
      order_id: 'O-9001',
      amount_cents: 12_000,
      reason: 'damaged',
      idempotency_key: 'refund-1',
    });
    a = toolsOf(new PostgresJobStore(schema.pool), payments, clock);
    b = toolsOf(new PostgresJobStore(schema.pool), payments, clock);
  });
  afterAll(async () => {
    await schema.drop();
  });

  const range = { report_type: 'refunds_by_order', from: '2026-11-01', to: '2026-11-30' };

  it('a submit retried on another executor finds the same job; status and result agree across executors', async () => {
    const key = uniqueName('idem');
    const [first, second] = (await Promise.all([
      a.submit_report_job!.execute(range, inv(key)),
      b.submit_report_job!.execute(range, inv(key)),
    ])) as { job_id: string }[];
    expect(second!.job_id).toBe(first!.job_id);
    const jobId = first!.job_id;

    await clock.advance(10_000);
    const sa = (await a.check_job_status!.execute({ job_id: jobId }, inv('s1'))) as { status: string };
    const sb = (await b.check_job_status!.execute({ job_id: jobId }, inv('s2'))) as { status: string };
    expect(sa).toEqual(sb);
    expect(sa.status).toBe('running');
    await expect(b.get_job_result!.execute({ job_id: jobId }, inv('r0'))).rejects.toThrow(
      /poll again in \d+ s/,
    );

    await clock.advance(60_000);
    const [ra, rb] = await Promise.all([
      a.get_job_result!.execute({ job_id: jobId }, inv('r1')),
      b.get_job_result!.execute({ job_id: jobId }, inv('r2')),
    ]);
    expect(ra).toEqual(rb);
    expect(ra).toMatchObject({
      job_id: jobId,
      report_type: 'refunds_by_order',
      rows: [{ key: 'O-9001', count: 1, amount: 120 }],
      total_count: 1,
      total_amount: 120,
    });
  });
});
