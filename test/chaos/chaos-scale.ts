/**
 * Sizes of the chaos scenarios. `ci` (the default, run by `npm test`) keeps the whole suite within a
 * few minutes on a 2-core machine; `full` (TOOLGATE_CHAOS_SCALE=full, `npm run chaos:full`) runs the
 * sizes the reliability brief names.
 */
export interface ChaosScale {
  readonly name: 'ci' | 'full';
  /** Scenario 1: distinct calls, keys, executor children, kill period. */
  readonly crashCalls: number;
  readonly crashKeys: number;
  readonly executors: number;
  readonly killEveryMs: number;
  /** Scenario 2: how long each dependency stays down. */
  readonly outageMs: number;
  readonly outageCalls: number;
  /** Scenario 4: generated malformed events. */
  readonly adversarialRuns: number;
  /** Network scenarios (executors in namespaces): calls per run, and how long a fault lasts. */
  readonly networkCalls: number;
  readonly networkFaultMs: number;
  /**
   * Starvation scenarios (a CPU hog on every core): returns filed while the legacy service is
   * frozen and resumed (with 30 % of answers lost, then with mixed faults; each ~18 % more calls:
   * redeliveries and second tasks), MCP calls answered after the gateway stopped waiting, and calls
   * held by an executor frozen past its lease.
   */
  readonly starvedReturns: number;
  readonly starvedMixedReturns: number;
  readonly starvedMcpCalls: number;
  readonly frozenExecutorCalls: number;
}

const SCALES: Record<ChaosScale['name'], ChaosScale> = {
  ci: {
    name: 'ci',
    crashCalls: 1_000,
    crashKeys: 50,
    executors: 3,
    killEveryMs: 4_000,
    outageMs: 5_000,
    outageCalls: 300,
    adversarialRuns: 220,
    networkCalls: 240,
    networkFaultMs: 10_000,
    starvedReturns: 255,
    starvedMixedReturns: 170,
    starvedMcpCalls: 6,
    frozenExecutorCalls: 12,
  },
  full: {
    name: 'full',
    crashCalls: 10_000,
    crashKeys: 200,
    executors: 3,
    killEveryMs: 4_000,
    outageMs: 10_000,
    outageCalls: 2_000,
    adversarialRuns: 1_000,
    networkCalls: 1_500,
    networkFaultMs: 15_000,
    starvedReturns: 850,
    starvedMixedReturns: 510,
    starvedMcpCalls: 20,
    frozenExecutorCalls: 40,
  },
};

/** The scale selected by TOOLGATE_CHAOS_SCALE (`ci` unless it says `full`). */
export function chaosScale(env: Readonly<Record<string, string | undefined>> = process.env): ChaosScale {
  const name = env.TOOLGATE_CHAOS_SCALE ?? 'ci';
  if (name !== 'ci' && name !== 'full')
    throw new Error(`TOOLGATE_CHAOS_SCALE must be ci or full, got ${name}`);
  return SCALES[name];
}

/** Whole-suite timeouts grow with the scale. */
export function scaledTimeout(ciMs: number): number {
  return chaosScale().name === 'full' ? ciMs * 12 : ciMs;
}
