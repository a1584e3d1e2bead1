import type { ToolCallRequestedEvent, ToolCallResultEvent } from '../../libs/events/contracts.js';
import type { NetworkLab } from './network-lab.js';
import { SAFETY_TOOLS } from './safety-ledger.js';
import type { TopicCollector } from './topic-collector.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `count` calls tagged `tag`, cycling through the three retry-safety tools, over `keys` keys. */
export async function safetyCalls(
  lab: NetworkLab,
  tag: string,
  count: number,
  keys: number,
): Promise<ToolCallRequestedEvent[]> {
  const calls: ToolCallRequestedEvent[] = [];
  for (let i = 0; i < count; i++)
    calls.push(await lab.call(SAFETY_TOOLS[i % SAFETY_TOOLS.length]!, i, `${tag}k${i % keys}`, tag));
  return calls;
}

export interface StreamRun {
  /** Resolves when everything was published, with the publish retries it took. */
  readonly published: Promise<number>;
  /** Resolves once `share` of the calls have an answer. */
  answeredShare(share: number, timeoutMs: number): Promise<void>;
  /** Resolves once every call has an answer; the time from the first publish, in ms. */
  allAnswered(timeoutMs: number, diagnose: () => string): Promise<number>;
  /** Answer latency (first answer's completion − the call's first publish) percentiles in ms. */
  latency(): { p50: number; p99: number; max: number };
}

/** Publishes `calls` evenly over `spanMs` in 100 ms ticks, and watches their answers arrive. */
export function streamCalls(
  lab: NetworkLab,
  calls: readonly ToolCallRequestedEvent[],
  results: TopicCollector<'results'>,
  spanMs: number,
): StreamRun {
  const ids = new Set(calls.map((c) => c.callId));
  const started = Date.now();
  const perTick = Math.max(1, Math.ceil(calls.length / (spanMs / 100)));
  const publishedAt = new Map<string, number>();
  const published = (async () => {
    let retries = 0;
    for (let i = 0; i < calls.length; i += perTick) {
      const tick = calls.slice(i, i + perTick);
      for (const c of tick) publishedAt.set(c.callId, Date.now());
      retries += await lab.publish(tick);
      await sleep(100);
    }
    return retries;
  })();
  const firstAnswers = (): Map<string, ToolCallResultEvent> => {
    const first = new Map<string, ToolCallResultEvent>();
    for (const r of results.events) if (ids.has(r.callId) && !first.has(r.callId)) first.set(r.callId, r);
    return first;
  };
  const answered = (): number => firstAnswers().size;
  return {
    published,
    answeredShare: (share, timeoutMs) =>
      results.until(
        () => answered() >= Math.ceil(calls.length * share),
        timeoutMs,
        () => `${share * 100}% of the calls answered: ${answered()}/${calls.length}`,
      ),
    async allAnswered(timeoutMs, diagnose) {
      await results.until(
        () => answered() >= calls.length,
        timeoutMs,
        () => `every call answered: ${answered()}/${calls.length}\n${diagnose()}`,
      );
      return Date.now() - started;
    },
    latency() {
      const ms = [...firstAnswers().values()]
        .map((r) => r.completedAtMs - publishedAt.get(r.callId)!)
        .sort((a, b) => a - b);
      const at = (q: number): number => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] ?? 0;
      return { p50: at(0.5), p99: at(0.99), max: ms[ms.length - 1] ?? 0 };
    },
  };
}
