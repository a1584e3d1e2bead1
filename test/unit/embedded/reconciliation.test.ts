import { describe, expect, it } from 'vitest';
import type { Principal } from '../../../libs/core/types.js';
import { DEMO_PRINCIPALS } from '../../../services/demo/principals.js';
import { openAITurn } from '../../../services/demo/scripted-model.js';
import type { ToolCallResolution } from '../../../services/sdk/index.js';
import { embeddedStores } from './embedded-parts.js';

const desk: Principal = { ...DEMO_PRINCIPALS.supportDesk, scopes: ['inventory:write'] };

const started = embeddedStores();

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
    const tg = await started({ checkScheduleMs: [50, 100], onResolution: (r) => resolutions.push(r) });
    // The check before sending is answered; the adjustment is applied but never answered; the
    // status checks after it hang for as long as the executor keeps asking (the third, if the
    // executor gets to it, meets the reconciler's first check instead: it asks again on schedule).
    tg.downstreams.faults.inventory.passNext(1).loseResponseNext(1, { silently: true }).hangNext(3);
    const outcome = await tg.client.runTurn(
      openAITurn('rec', [
        { tool: 'update_inventory', args: { sku: 'SKU-21', delta: -1, reason: 'damaged' } },
      ]),
      { principal: desk, taskId: 'reconcile-1', step: 1 },
    );
    expect(outcome.results[0]!.outcome).toBe('UNRESOLVED');
    expect(JSON.parse(outcome.messages[0]!.content as string)).toMatchObject({ status: 'outcome_unknown' });

    const callId = outcome.calls[0]!.published!.callId;
    const settled = await eventually(async () => {
      const c = await tg.caseStore.get({ callId });
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
