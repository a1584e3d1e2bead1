import { describe, expect, it } from 'vitest';
import { closeAfterEach } from '../../helpers/close-after-each.js';
import { ana, ben, storeHarness, supportDesk, type StoreHarness } from './store-harness.js';

let h: StoreHarness;
closeAfterEach(() => h);

describe('lookup_order', () => {
  it('shows the owner their order in dollars', async () => {
    h = storeHarness();
    const { result } = await h.call('lookup_order', { order_id: 'O-9001' }, ana);
    expect(result.payload).toEqual({
      order_id: 'O-9001',
      customer_id: 'C-1',
      status: 'delivered',
      placed_at: '2026-11-10T18:05:00.000Z',
      currency: 'USD',
      total: 512.4,
      items: [
        { sku: 'SKU-21', name: 'Espresso machine', quantity: 1, unit_price: 499.9 },
        { sku: 'SKU-3', name: 'Descaler, 2-pack', quantity: 1, unit_price: 12.5 },
      ],
    });
  });

  it("refuses someone else's order, and lets support read any order of the tenant", async () => {
    h = storeHarness();
    expect((await h.call('lookup_order', { order_id: 'O-9001' }, ben)).result.outcome).toBe('UNAUTHORIZED');
    expect((await h.call('lookup_order', { order_id: 'O-9001' }, supportDesk)).result.outcome).toBe(
      'SUCCESS',
    );
  });

  it('an orders service that hangs during the ownership check fails closed as unavailable, not unauthorized', async () => {
    h = storeHarness();
    h.downstreams.faults.orders.hangNext(1);
    const { result } = await h.call('lookup_order', { order_id: 'O-5512' }, ana);
    expect(result.outcome).toBe('EXECUTION_ERROR');
    expect(result.error).toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE', retryable: true });
    expect(result.toolInvocations).toBe(0);
  });
});

describe('get_weather', () => {
  it('reads current conditions, in metric or imperial units', async () => {
    h = storeHarness();
    const metric = await h.call('get_weather', { city: 'boston' }, ana);
    expect(metric.result.payload).toEqual({
      city: 'Boston',
      observed_at: '2026-11-29T23:00:00.000Z',
      temperature: 2.5,
      temperature_unit: 'C',
      conditions: 'snow',
      wind_speed: 24,
      wind_unit: 'km/h',
    });
    const imperial = await h.call('get_weather', { city: 'Boston', units: 'imperial' }, ana);
    expect(imperial.result.payload).toMatchObject({
      temperature: 36.5,
      temperature_unit: 'F',
      wind_speed: 14.9,
    });
  });

  it('an unknown city is a caller error with a way forward', async () => {
    h = storeHarness();
    const { result } = await h.call('get_weather', { city: 'Atlantis' }, ana);
    expect(result.error).toMatchObject({
      code: 'CALLER_ERROR',
      suggestedFix: 'Check the spelling, or use the nearest large city.',
    });
  });

  it('a slow weather service times out and is retried once; a read-only timeout is a plain failure', async () => {
    h = storeHarness();
    h.downstreams.faults.weather.setDelayMs(5_000);
    const { result } = await h.call('get_weather', { city: 'Boston' }, ana);
    expect(result.outcome).toBe('EXECUTION_ERROR');
    expect(result.error?.code).toBe('TIMEOUT');
    expect(result.toolInvocations).toBe(2);
  });

  it('a dead weather service trips its breaker: later calls fail fast without reaching it', async () => {
    h = storeHarness({ breakerVolume: 4 });
    h.downstreams.faults.weather.setRates({ fail: 1 });
    for (let i = 0; i < 3; i++) await h.call('get_weather', { city: 'Boston' }, ana);
    expect(h.breakers.state('weather')).toBe('open');
    const reached = h.downstreams.faults.weather.received();
    const { result } = await h.call('get_weather', { city: 'Boston' }, ana);
    expect(result.error?.code).toBe('BREAKER_OPEN');
    expect(h.downstreams.faults.weather.received()).toBe(reached);
    // Other downstreams are unaffected.
    expect((await h.call('lookup_order', { order_id: 'O-5512' }, ana)).result.outcome).toBe('SUCCESS');
  });
});
