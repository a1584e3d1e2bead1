import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { classify } from '../../../libs/core/classify.js';
import { DownstreamError } from '../../../services/downstreams/downstream-error.js';
import { FaultInjector } from '../../../services/downstreams/faults.js';
import { createMemoryDownstreams } from '../../../services/downstreams/memory-downstreams.js';
import { storeSeed } from '../../../services/downstreams/seed-data.js';
import { T0 } from './store-harness.js';

const request = (key: string, amount_cents = 1000, order_id = 'O-5512') => ({
  tenant: 't1',
  order_id,
  amount_cents,
  reason: 'damaged' as const,
  idempotency_key: key,
});

describe('fake payments service', () => {
  it('deduplicates on the idempotency key: the same key returns the first receipt and moves no more money', async () => {
    const { payments } = createMemoryDownstreams({ clock: new ManualClock(T0) });
    const first = await payments.refund(request('k1'));
    const again = await Promise.all([payments.refund(request('k1')), payments.refund(request('k1'))]);
    expect(again).toEqual([first, first]);
    expect(await payments.ledger({ tenant: 't1' })).toEqual([first]);
    expect(await payments.findRefund('t1', 'k1')).toEqual(first);
    expect(await payments.findRefund('t1', 'k2')).toBeUndefined();
  });

  it('refuses a reused key with other arguments, a missing charge and an over-refund, applying nothing', async () => {
    const { payments } = createMemoryDownstreams({ clock: new ManualClock(T0) });
    await payments.refund(request('k1', 1000));
    await expect(payments.refund(request('k1', 2000))).rejects.toMatchObject({
      status: 409,
      reason: 'idempotency_key_reused',
    });
    await expect(payments.refund(request('k2', 100, 'O-1'))).rejects.toMatchObject({
      status: 404,
      reason: 'no_charge',
    });
    await expect(payments.refund(request('k3', 4000))).rejects.toMatchObject({
      status: 422,
      reason: 'exceeds_refundable',
      details: { captured_cents: 4999, refunded_cents: 1000, refundable_cents: 3999 },
    });
    await expect(payments.refund(request('k4', 0))).rejects.toMatchObject({ status: 400 });
    expect(await payments.ledger({ tenant: 't1' })).toHaveLength(1);
  });

  it('keys are per tenant', async () => {
    const { payments } = createMemoryDownstreams({ clock: new ManualClock(T0) });
    await payments.refund(request('k1'));
    await payments.refund({ ...request('k1', 500, 'O-4400'), tenant: 't2' });
    expect(await payments.ledger({ tenant: 't1' })).toHaveLength(1);
    expect(await payments.ledger({ tenant: 't2' })).toHaveLength(1);
  });
});

describe('fault injector', () => {
  it('plays planned faults in order, then none; counts every request per operation', async () => {
    const { payments, faults } = createMemoryDownstreams({ clock: new ManualClock(T0) });
    faults.payments.failNext(1).loseResponseNext(1);
    const failed = await payments.refund(request('k1')).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(DownstreamError);
    expect(classify(failed).code).toBe('SERVER_ERROR');
    expect(await payments.ledger({ tenant: 't1' })).toHaveLength(0);
    const lost = await payments.refund(request('k1')).catch((e: unknown) => e);
    expect(classify(lost).code).toBe('TIMEOUT');
    expect(await payments.ledger({ tenant: 't1' })).toHaveLength(1);
    await payments.refund(request('k1'));
    expect(faults.payments.received('refund')).toBe(3);
    expect(faults.payments.injected('fail')).toBe(1);
    expect(faults.payments.injected('lose-response')).toBe(1);
    expect(faults.orders.received()).toBe(0);
  });

  it('a hang ends when the caller’s signal aborts, with nothing applied', async () => {
    const { payments, faults } = createMemoryDownstreams({ clock: new ManualClock(T0) });
    faults.payments.hangNext(1);
    const controller = new AbortController();
    const pending = payments.refund(request('k1'), controller.signal);
    controller.abort(new DOMException('timed out', 'TimeoutError'));
    await expect(pending).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(await payments.ledger({ tenant: 't1' })).toHaveLength(0);
  });

  it('fault rates are drawn from a seeded generator: the same seed picks the same requests', async () => {
    const picks = async (seed: number) => {
      const faults = new FaultInjector({ clock: new ManualClock(T0), seed }).setRates({ fail: 0.3 });
      const out: boolean[] = [];
      for (let i = 0; i < 40; i++) {
        out.push(await faults.around('op', undefined, async () => true).catch(() => false));
      }
      return out;
    };
    const a = await picks(7);
    expect(await picks(7)).toEqual(a);
    const failures = a.filter((ok) => !ok).length;
    expect(failures).toBeGreaterThan(0);
    expect(failures).toBeLessThan(40);
    expect(() =>
      new FaultInjector({ clock: new ManualClock(T0) }).setRates({ fail: 0.6, hang: 0.6 }),
    ).toThrow(RangeError);
  });

  it('a delay waits on the injected clock', async () => {
    const clock = new ManualClock(T0);
    const { weather, faults } = createMemoryDownstreams({ clock });
    faults.weather.setDelayMs(1_000);
    let answered = false;
    const pending = weather.current('Lisbon').then(() => {
      answered = true;
    });
    await clock.advance(999);
    expect(answered).toBe(false);
    await clock.advance(1);
    await pending;
    expect(answered).toBe(true);
  });
});

describe('seed data', () => {
  it('is deterministic and holds the story’s facts', () => {
    const seed = storeSeed();
    expect(storeSeed()).toEqual(seed);
    const order = (id: string) => seed.orders.find((o) => o.tenant === 't1' && o.order_id === id)!;
    expect(order('O-5512')).toMatchObject({ customer_id: 'C-1', total_cents: 4999 });
    expect(order('O-5512').lines[0]!.name).toMatch(/blender/i);
    expect(order('O-7788').customer_id).toBe('C-2');
    expect(order('O-9001').lines.some((l) => l.unit_price_cents === 49990)).toBe(true);
    expect(seed.customers.filter((c) => c.tenant === 't1').map((c) => c.name)).toEqual([
      'Ana Silva',
      'Ben Okafor',
      'Chloe Martin',
    ]);
    expect(seed.stock.find((s) => s.sku === 'SKU-7')).toBeDefined();
  });
});
