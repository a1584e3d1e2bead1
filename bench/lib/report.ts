/**
 * Figures and the facts they depend on: medians, ratios, number formatting, machine facts and load
 * averages. Benchmarks print; nothing here asserts anything about time.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';

/** Epoch milliseconds with sub-millisecond resolution, comparable across processes on one machine. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * Starts a CPU meter for this process: the returned function gives the user + system time (all
 * threads) spent since, in microseconds, divided by `per` (e.g. the calls handled meanwhile).
 */
export function cpuMeter(): (per: number) => number {
  const start = process.cpuUsage();
  return (per) => {
    const used = process.cpuUsage(start);
    return (used.user + used.system) / per;
  };
}

/** Median of a non-empty list (mean of the middle two for an even count); NaN for an empty one. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A number with thousands separators and `digits` decimals. */
export function fmt(n: number, digits = 0): string {
  if (!Number.isFinite(n)) return String(n);
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/** `a / b` as "0.42×". */
export function ratio(a: number, b: number, digits = 2): string {
  return `${fmt(a / b, digits)}×`;
}

/** The three load averages, two decimals each. */
export function loadAverage(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
}

/** One line naming the machine, the runtime and the current load. */
export function machineLine(extra = ''): string {
  const cpus = os.cpus();
  return (
    `machine: nproc ${os.availableParallelism()} (${cpus[0]?.model ?? 'unknown cpu'}), ` +
    `${fmt(os.totalmem() / 2 ** 30)} GiB, node ${process.version}, ${os.platform()} ${os.release()}` +
    `${extra === '' ? '' : `; ${extra}`}; load average at start ${loadAverage()}`
  );
}

/** A markdown table. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const align = header.map((_, i) => (i === 0 ? '---' : '---:'));
  return [header, align, ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
}

/** Writes a line to stdout. */
export function say(line = ''): void {
  process.stdout.write(`${line}\n`);
}

/** Writes a progress note to stderr, so stdout stays the report. */
export function note(line: string): void {
  process.stderr.write(`  · ${line}\n`);
}

/**
 * Runs every candidate once per round, `rounds` times, rotating which goes first each round so that
 * neither the machine's drift (other work starting or stopping) nor warm-up favours one of them.
 * Returns the figures per candidate name, in round order.
 */
export async function alternate(
  rounds: number,
  candidates: readonly { readonly name: string; readonly run: () => Promise<number> }[],
): Promise<Map<string, number[]>> {
  const results = new Map<string, number[]>(candidates.map((c) => [c.name, []]));
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < candidates.length; i++) {
      const c = candidates[(i + round) % candidates.length]!;
      const value = await c.run();
      results.get(c.name)!.push(value);
      note(`round ${round + 1}/${rounds} ${c.name}: ${fmt(value, 1)}`);
    }
  }
  return results;
}

/** Rejects with a message naming `what` when `promise` has not settled within `ms`. */
export async function within<T>(promise: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what()}`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs a benchmark's `main`. A failure is written to stderr (its stack when it has one) and sets
 * the process's exit code to 1; nothing is thrown.
 */
export function runMain(main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
