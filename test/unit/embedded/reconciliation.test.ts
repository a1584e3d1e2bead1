import { afterEach, describe, expect, it } from 'vitest';
import type { Principal } from '../../../libs/core/types.js';
import { createEmbeddedStore, type EmbeddedStore } from '../../../services/demo/embedded-store.js';
import { openAITurn } from '../../../services/demo/scripted-model.js';
import type { ToolCallResolution } from '../../../services/sdk/index.js';

const desk: Principal = {
  id: 'support-desk:S-1',
  tenant: 't1',
  kind: 'agent',
  onBehalfOf: 'S-1',
  roles: ['support'],
  scopes: ['inventory:write'],
};

let tg: EmbeddedStore | undefined;
afterEach(async () => {
  await tg?.stop();
  tg = undefined;
});

/** Resolves once `check` returns a value, polling every 20 ms; rejects after `timeoutMs`. */
async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('embedded toolgate: an unknown outcome is reconciled, not reported as failed', () => {
  it('a stock change whose answer and first status check were lost is UNRESOLVED, then settled as applied', async () => {
    const resolutions: ToolCallResolution[] = [];
    tg = createEmbeddedStore({ checkScheduleMs: [50, 100], onResolution: (r) => resolutions.push(r) });
    await tg.start();
    // The adjustment is applied but never answered; the status check before the retry hangs too.
    tg.downstreams.faults.inventory.loseResponseNext(1, { silently: true }).hangNext(1);
    const outcome = await tg.client.runTurn(
      openAITurn('rec', [
        { tool: 'update_inventory', args: { sku: 'SKU-21', delta: -1, reason: 'damaged' } },
      ]),
      { principal: desk, taskId: 'reconcile-1', step: 1 },
    );
    expect(outcome.results[0]!.outcome).toBe('UNRESOLVED');
    expect(JSON.parse(outcome.messages[0]!.content as string)).toMatchObject({ status: 'outcome_unknown' });

    const callId = outcome.calls[0]!.published!.callId;
    const t = tg;
    const settled = await eventually(async () => {
      const c = await t.caseStore.get({ callId });
      return c?.state === 'open' || c === undefined ? undefined : c;
    });
    expect(settled).toMatchObject({
      reason: 'UNRESOLVED',
      state: 'resolved_succeeded',
      tool: 'update_inventory',
    });
    await eventually(async () => (resolutions.length > 0 ? true : undefined));
    expect(resolutions[0]!.result).toMatchObject({
      outcome: 'SUCCESS',
      payload: { sku: 'SKU-21', on_hand: 5 },
    });
    expect(resolutions[0]!.source).toBe('reconciler');
    // Applied exactly once.
    expect((await tg.downstreams.inventory.getStock('t1', 'SKU-21'))!.on_hand).toBe(5);
    expect(tg.downstreams.faults.inventory.received('adjust')).toBe(1);
  }, 30_000);
});
