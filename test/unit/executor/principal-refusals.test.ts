import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import {
  PRINCIPAL_REFUSAL_REASONS,
  type PrincipalRefusalReason,
} from '../../../libs/auth/principal-refusal.js';
import { signPrincipal } from '../../../libs/auth/sign-principal.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import { PRINCIPAL_REFUSALS_METRIC, createExecutorTelemetry } from '../../../services/executor/telemetry.js';
import { AUDIENCE, createHarness, ISSUER, PRINCIPAL, stockTool, type Harness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const REFUSED = 'refused a call whose principal was not accepted';

/** Every sample of the refusals counter, by reason. */
async function refusals(registry: Registry): Promise<Map<string, number>> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === PRINCIPAL_REFUSALS_METRIC);
  return new Map((metric?.values ?? []).map((v) => [String(v.labels.reason), v.value]));
}

describe('a refused principal is logged and counted by the executor', () => {
  it('wrong audience: one warn line with the reason and no part of the token, and reason="audience" counted once', async () => {
    const stock = stockTool();
    h = await createHarness([stock.tool]);
    const registry = new Registry();
    const foreignAudience = await signPrincipal(PRINCIPAL, h.signingKey, {
      issuer: ISSUER,
      audience: 'toolgate',
      kid: 'k1',
      ttlSeconds: 300,
    });
    expect(AUDIENCE).not.toBe('toolgate');
    const wrong = await h.request(
      { sku: 'A', seq: 1, delta: 1 },
      { index: 0, principalAssertion: foreignAudience },
    );
    const ok = await h.request({ sku: 'B', seq: 1, delta: 1 }, { index: 1 });
    const unsigned = await h.request({ sku: 'C', seq: 1, delta: 1 }, { index: 2, principalAssertion: '' });
    await h.publishCalls([wrong, ok, unsigned]);
    await h.executor({ instrumentation: { registry } }).start();

    const results = await h.read('results', 3);
    expect(new Map(results.map((r) => [r.event.callId, r.event.outcome]))).toEqual(
      new Map([
        [wrong.callId, 'UNAUTHORIZED'],
        [ok.callId, 'SUCCESS'],
        [unsigned.callId, 'UNAUTHORIZED'],
      ]),
    );
    expect(stock.invocations.map((i) => i.sku)).toEqual(['B']);

    const refusedLines = h.logs.filter((l) => l.msg === REFUSED);
    expect(refusedLines.map((l) => l.level)).toEqual(['warn', 'warn']);
    const line = refusedLines.find((l) => 'callId' in l.obj && l.obj.callId === wrong.callId);
    expect(line?.obj).toMatchObject({
      reason: 'audience',
      detail: 'The principal assertion is meant for another audience.',
      callId: wrong.callId,
      taskId: wrong.taskId,
      tool: 'adjust_stock',
      tenant: PRINCIPAL.tenant,
    });
    expect(line?.obj).not.toHaveProperty('principalId');
    expect(
      refusedLines.find((l) => 'callId' in l.obj && l.obj.callId === unsigned.callId)?.obj,
    ).toMatchObject({ reason: 'missing' });
    // No line the executor wrote carries any part of either token.
    const logged = JSON.stringify(h.logs);
    for (const token of [foreignAudience, ok.principalAssertion]) {
      for (const part of token.split('.')) expect(logged).not.toContain(part);
    }

    const counted = await refusals(registry);
    expect(counted.get('audience')).toBe(1);
    expect(counted.get('missing')).toBe(1);
    expect([...counted.values()].reduce((a, b) => a + b, 0)).toBe(2);
    // Every reason is exported from the start, and nothing else is.
    expect([...counted.keys()].sort()).toEqual([...PRINCIPAL_REFUSAL_REASONS].sort());
  });

  it('a verified principal of another tenant is refused with reason "tenant" and names the principal', async () => {
    const stock = stockTool();
    h = await createHarness([stock.tool]);
    const registry = new Registry();
    const borrowed = await h.request(
      { sku: 'A', seq: 1, delta: 1 },
      { principal: { ...PRINCIPAL, tenant: 't2' } },
    );
    await h.publishCalls([borrowed]);
    await h.executor({ instrumentation: { registry } }).start();
    const [result] = await h.read('results', 1);
    expect(result!.event.outcome).toBe('UNAUTHORIZED');
    expect(stock.invocations).toHaveLength(0);
    const lines = h.logs.filter((l) => l.msg === REFUSED);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.obj).toMatchObject({ reason: 'tenant', tenant: 't1', principalId: PRINCIPAL.id });
    expect((await refusals(registry)).get('tenant')).toBe(1);
  });

  it('labels only reasons of the closed list, whatever the observer is handed', async () => {
    const registry = new Registry();
    const telemetry = createExecutorTelemetry({
      registry,
      tools: { list: () => [] },
      clock: systemClock,
    });
    let seed = 11;
    const next = (): number => (seed = (seed * 48_271) % 2_147_483_647);
    const alphabet = 'abcdefghijklmnopqrstuvwxyz_';
    const handed: string[] = ['', 'AUDIENCE', 'audience\n', 'reason="x"', ...PRINCIPAL_REFUSAL_REASONS];
    for (let i = 0; i < 300; i++) {
      handed.push(Array.from({ length: next() % 12 }, () => alphabet[next() % alphabet.length]).join(''));
    }
    for (const reason of handed) telemetry.observer.principalRefused?.(reason as PrincipalRefusalReason);

    const counted = await refusals(registry);
    expect([...counted.keys()].sort()).toEqual([...PRINCIPAL_REFUSAL_REASONS].sort());
    const listed = new Set<string>(PRINCIPAL_REFUSAL_REASONS);
    const outside = handed.filter((r) => !listed.has(r)).length;
    expect(counted.get('other')).toBe(outside + 1);
    for (const reason of PRINCIPAL_REFUSAL_REASONS.filter((r) => r !== 'other')) {
      expect(counted.get(reason), reason).toBe(handed.filter((r) => r === reason).length);
    }
  });
});
