import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresCaseStore } from '../../../libs/adapters/postgres/case-store.js';
import { migrate } from '../../../libs/adapters/postgres/migrate.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { createToolgateMetrics } from '../../../libs/observability/metrics.js';
import { postgresCaseCounts } from '../../../libs/observability/postgres-case-counts.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';
import { deadLetter } from '../../unit/audit/fixtures.js';
import { parsePromText } from '../../unit/observability/prom-text.js';

let db: TestSchema;
beforeAll(async () => {
  db = await createTestSchema('tg_obs_cases');
  await migrate(db.pool);
});
afterAll(async () => {
  await db.drop();
});

describe('unfinished reconciliation cases counted in Postgres', () => {
  it('zero of each before any case, then open and needs_manual as cases move; resolved ones are not counted', async () => {
    const clock = new ManualClock(1_000_000);
    const store = new PostgresCaseStore(db.pool, clock);
    const read = postgresCaseCounts(db.pool);
    expect(await read()).toEqual({ open: 0, needs_manual: 0 });

    const cases = [];
    for (let i = 0; i < 4; i++) cases.push((await store.openFromDeadLetter(deadLetter())).case);
    const [a, b] = cases;
    const escalated = await store.transition(
      a!.caseId,
      { to: 'needs_manual', by: 'status-check', note: 'checks exhausted' },
      'open',
    );
    expect(escalated.ok).toBe(true);
    const resolved = await store.transition(
      b!.caseId,
      { to: 'resolved_failed', by: 'operator:ana', note: 'payments confirms nothing was charged' },
      'open',
    );
    expect(resolved.ok).toBe(true);
    expect(await read()).toEqual({ open: 2, needs_manual: 1 });

    const registry = new Registry();
    createToolgateMetrics(registry, { isKnownTool: () => false, caseCounts: read });
    const samples =
      parsePromText(await registry.metrics()).get('toolgate_reconciliation_cases')?.samples ?? [];
    expect(samples.map((s) => [s.labels.state, s.value])).toEqual([
      ['open', 2],
      ['needs_manual', 1],
    ]);
  });
});
