import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolCallResult } from '../../../libs/core/types.js';
import {
  call,
  context,
  filingArgs,
  legacyKey,
  legacyStack,
  runGrouped,
  type LegacyStack,
} from './harness.js';

/**
 * Every way the legacy service can leave an answer out, at once: answers lost after the commit,
 * connections cut before anything was stored, and work so slow the client gives up before the
 * service commits (inside its window) — or misses the window and is abandoned. The invariants hold
 * on every path, and each path is really taken.
 */
describe('submit_filing under mixed legacy faults', () => {
  let stack: LegacyStack;

  beforeAll(async () => {
    stack = await legacyStack({
      faults: { dropAfterCommit: 0.15, dropBeforeCommit: 0.2, slow: 0.15 },
      seed: 7,
      slowMs: 450,
      serviceWindowMs: 600,
      timing: { lookupTimeoutMs: 2_000, submitTimeoutMs: 300, settleMarginMs: 250 },
    });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('300 returns: never two filings, never a failure for a filing that exists, every path taken', async () => {
    const groups = Array.from({ length: 300 }, (_, i) => [i]);
    const ran = await runGrouped(groups, 24, async (i) => {
      const args = filingArgs(i);
      const { result } = await stack.pipeline.run(call(args, `m-${i}`), context(`mixed-${i}`));
      return { args, result };
    });
    const rows = await stack.rowsByKey();
    const paths = new Map<string, number>();
    const failed: { key: string; result: ToolCallResult }[] = [];
    for (const { args, result } of ran) {
      const via = (result.payload as { confirmed_by?: string } | undefined)?.confirmed_by;
      if (via !== undefined) paths.set(via, (paths.get(via) ?? 0) + 1);
      if (result.outcome === 'SUCCESS') {
        expect(rows.get(legacyKey(args))).toBe(1);
      } else if (result.outcome !== 'UNRESOLVED') {
        failed.push({ key: legacyKey(args), result });
      }
    }
    console.log(
      `mixed faults: ${JSON.stringify({ paths: Object.fromEntries(paths), failed: failed.length, service: stack.server.stats() })}`,
    );
    expect([...rows.values()].filter((n) => n > 1)).toEqual([]);
    // A reported failure is honest: nothing was stored for it, and its code says nothing was done
    // (on a starved machine a call may also fail before it could be sent).
    for (const f of failed) {
      expect(rows.get(f.key) ?? 0).toBe(0);
      expect(['SERVER_ERROR', 'TIMEOUT', 'DEPENDENCY_UNAVAILABLE', 'RATE_LIMITED']).toContain(
        f.result.error?.code,
      );
    }
    expect(paths.get('status_check') ?? 0).toBeGreaterThan(0);
    expect(paths.get('resubmission') ?? 0).toBeGreaterThan(0);
    expect(stack.server.stats().droppedBeforeCommit).toBeGreaterThan(0);
    expect(stack.server.stats().slowed).toBeGreaterThan(0);
  }, 240_000);
});
