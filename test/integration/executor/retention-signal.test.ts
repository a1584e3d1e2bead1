import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisIdempotencyTombstones } from '../../../libs/adapters/redis/index.js';
import type { Service } from '../../../libs/runtime/service.js';
import { parsePromText } from '../../unit/observability/prom-text.js';
import { createExecutorStack, type ExecutorStack } from './executor-stack.js';
import { resultsFor, startLedgerService } from './ledger-service.js';
import { ledgerRows } from './ledger-tools.js';

/**
 * The idempotency retention is a bound: a call repeated after its record expired (RESULT_TTL_MS)
 * runs again. That is made visible — a tombstone outlives the record, and a claim taken for a key
 * whose record expired is counted (toolgate_idempotency_claims_after_expiry_total, by tool) and
 * named in the idempotency stage's audit decision — while repeats within the retention and fresh
 * calls are not counted.
 *
 * The retention is long enough that no step of the test can outlast it; the test checks the record
 * carries it, then has Redis expire the record at once, as it would once the retention ran out.
 */

const RESULT_TTL_MS = 600_000;
const METRIC = 'toolgate_idempotency_claims_after_expiry_total';

let stack: ExecutorStack;
let service: Service | undefined;

beforeAll(async () => {
  stack = await createExecutorStack('retention');
});

afterAll(async () => {
  await service?.stop();
  await stack?.close();
});

async function afterExpiryCount(metricsUrl: string): Promise<number> {
  const families = parsePromText(await (await fetch(metricsUrl)).text());
  const samples = families.get(METRIC)?.samples ?? [];
  expect(samples.every((s) => Object.keys(s.labels).join() === 'tool')).toBe(true);
  return samples.find((s) => s.labels.tool === 'ledger_append')?.value ?? 0;
}

describe('a call repeated after the idempotency retention', () => {
  it('runs again, and the re-claim is counted and audited', async () => {
    const started = await startLedgerService(stack, 'executor-retention', {
      RESULT_TTL_MS: String(RESULT_TTL_MS),
      IDEMPOTENCY_TOMBSTONE_TTL_MS: '60000',
    });
    service = started.service;

    const first = await stack.request({ key: 'K-ret', seq: 1, ref: 'ret' });
    const publishedAt = Date.now();
    await stack.publishCalls([first]);
    const [answered] = await resultsFor(stack, first.callId);
    expect(answered!.outcome).toBe('SUCCESS');
    // The record lives for the configured retention, counted from its completion (after publishing).
    const record = `${stack.redis.prefix}idem:${answered!.idempotencyKey!}`;
    const ttlMs = await stack.redis.redis.pttl(record);
    expect(ttlMs).toBeLessThanOrEqual(RESULT_TTL_MS);
    expect(ttlMs).toBeGreaterThanOrEqual(RESULT_TTL_MS - (Date.now() - publishedAt) - 1);
    // Within the retention, a repeat (a resumed task's call: same coordinates) is a duplicate.
    const repeat = { ...first, callId: `${first.callId}-repeat` };
    await stack.publishCalls([repeat]);
    expect((await resultsFor(stack, repeat.callId))[0]!.outcome).toBe('DUPLICATE');
    expect(await afterExpiryCount(started.metricsUrl)).toBe(0);

    // The retention runs out: the record expires; the tombstone does not.
    await stack.redis.redis.pexpire(record, 1);
    while ((await stack.redis.redis.exists(record)) === 1) await new Promise((r) => setTimeout(r, 5));
    const late = { ...first, callId: `${first.callId}-late` };
    await stack.publishCalls([late]);
    expect((await resultsFor(stack, late.callId))[0]!.outcome).toBe('SUCCESS');
    // The documented bound: the effect happens again.
    expect((await ledgerRows(stack.db.pool)).filter((r) => r.callRef === 'ret')).toHaveLength(2);
    expect(await afterExpiryCount(started.metricsUrl)).toBe(1);
    const audits = await stack.read('audit', 3);
    const lateAudit = audits.find((a) => a.event.callId === late.callId)!;
    expect(lateAudit.event.decisions.find((d) => d.stage === 'idempotency')?.reason).toMatch(/retention/);

    // A fresh call is not counted.
    const fresh = await stack.request({ key: 'K-ret-fresh', seq: 1, ref: 'ret-fresh' });
    await stack.publishCalls([fresh]);
    expect((await resultsFor(stack, fresh.callId))[0]!.outcome).toBe('SUCCESS');
    expect(await afterExpiryCount(started.metricsUrl)).toBe(1);
  }, 60_000);
});

describe('RedisIdempotencyTombstones', () => {
  it('marks atomically (reporting an earlier mark), clears, and expires', async () => {
    const tombstones = new RedisIdempotencyTombstones(stack.redis.redis, { keyPrefix: stack.redis.prefix });
    expect(await tombstones.mark('k1', 60_000)).toBe(false);
    expect(await tombstones.mark('k1', 60_000)).toBe(true);
    await tombstones.clear('k1');
    expect(await tombstones.mark('k1', 60_000)).toBe(false);
    expect(await tombstones.mark('k2', 50)).toBe(false);
    await new Promise((r) => setTimeout(r, 120));
    expect(await tombstones.mark('k2', 60_000)).toBe(false);
    // Concurrent first marks: exactly one sees no earlier mark.
    const answers = await Promise.all(Array.from({ length: 20 }, () => tombstones.mark('k3', 60_000)));
    expect(answers.filter((seen) => !seen)).toHaveLength(1);
    await expect(tombstones.mark('', 1_000)).rejects.toThrow(RangeError);
  });
});
