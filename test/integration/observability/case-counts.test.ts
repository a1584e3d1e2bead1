import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresCaseStore } from '../../../libs/adapters/postgres/case-store.js';
import { migrate } from '../../../libs/adapters/postgres/migrate.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { systemClock } from '../../../libs/core/system-clock.js';
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
    const read = postgresCaseCounts(db.pool, () => clock.now());
    expect(await read()).toEqual({ counts: { open: 0, needs_manual: 0 }, oldestAgeSeconds: {} });

    // Cases created 0, 60, 120 and 180 s after the start; the first escalates, the second resolves.
    const cases = [];
    for (let i = 0; i < 4; i++) {
      cases.push((await store.openFromDeadLetter(deadLetter())).case);
      await clock.advance(60_000);
    }
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
    // Now is 240 s after the start: the oldest open case (the third) is 120 s old, the escalated
    // one keeps its creation time (240 s), and the resolved one no longer counts.
    expect(await read()).toEqual({
      counts: { open: 2, needs_manual: 1 },
      oldestAgeSeconds: { open: 120, needs_manual: 240 },
    });

    const registry = new Registry();
    createToolgateMetrics(registry, { isKnownTool: () => false, caseCounts: read });
    const families = parsePromText(await registry.metrics());
    const samples = (name: string) =>
      (families.get(name)?.samples ?? []).map((s) => [s.labels.state, s.value]);
    expect(samples('toolgate_reconciliation_cases')).toEqual([
      ['open', 2],
      ['needs_manual', 1],
    ]);
    expect(samples('toolgate_reconciliation_oldest_case_age_seconds')).toEqual([
      ['open', 120],
      ['needs_manual', 240],
    ]);
  });

  it('on the system clock the age is the real oldest case age, between the reads before and after', async () => {
    const schema = await createTestSchema('tg_obs_case_age');
    try {
      await migrate(schema.pool);
      const store = new PostgresCaseStore(schema.pool, systemClock);
      const oldest = (await store.openFromDeadLetter(deadLetter())).case;
      await store.openFromDeadLetter(deadLetter());
      const read = postgresCaseCounts(schema.pool);

      const before = Date.now();
      const got = await read();
      const after = Date.now();

      expect(got.counts).toEqual({ open: 2, needs_manual: 0 });
      const age = got.oldestAgeSeconds?.open;
      expect(age).toBeDefined();
      // The reader takes "now" between these two readings, so the age lies between these bounds.
      expect(age!).toBeGreaterThanOrEqual((before - oldest.createdAtMs) / 1000);
      expect(age!).toBeLessThanOrEqual((after - oldest.createdAtMs) / 1000);
      expect(got.oldestAgeSeconds?.needs_manual).toBeUndefined();
    } finally {
      await schema.drop();
    }
  });
});
