/**
 * An open-loop load generator: sends happen on a fixed schedule whatever the system answers, and
 * each latency is measured from the INTENDED send time, so a stall delays every send scheduled
 * during it and shows up in the percentiles instead of being hidden (coordinated omission).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { nowMs } from './report.js';

export interface OpenLoopOptions {
  /** Sends per second. */
  readonly rate: number;
  readonly durationMs: number;
  /**
   * Starts send `i`; `intendedAtMs` is when it was due. Not awaited: the schedule never waits for
   * an answer.
   */
  readonly send: (i: number, intendedAtMs: number) => void;
}

/** What the schedule achieved. */
export interface OpenLoopRun {
  readonly sent: number;
  /** How far behind schedule the generator itself fell at worst, ms. */
  readonly maxSendLagMs: number;
}

/** Runs the schedule to its end; resolves once the last send has been started. */
export async function openLoop(o: OpenLoopOptions): Promise<OpenLoopRun> {
  const total = Math.round((o.rate * o.durationMs) / 1000);
  const interval = 1000 / o.rate;
  const start = nowMs() + 50;
  let i = 0;
  let maxLag = 0;
  while (i < total) {
    const now = nowMs();
    while (i < total && start + i * interval <= now) {
      const intended = start + i * interval;
      maxLag = Math.max(maxLag, now - intended);
      o.send(i, intended);
      i++;
    }
    if (i < total) await sleep(Math.max(0, start + i * interval - nowMs()));
  }
  return { sent: total, maxSendLagMs: maxLag };
}
