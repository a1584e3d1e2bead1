import { connect } from 'node:net';

/** Options of {@link waitFor}. */
export interface WaitOptions {
  /** What is awaited, for the error message ("kafka on 127.0.0.1:19092"). */
  readonly what: string;
  readonly timeoutMs: number;
  readonly intervalMs?: number;
  /** Checked before every probe; a returned reason ends the wait at once (e.g. the process died). */
  readonly giveUp?: () => string | undefined;
}

/**
 * Polls `probe` until it resolves true; resolves with the elapsed milliseconds. A probe that throws
 * counts as "not yet". Rejects when `giveUp` returns a reason or `timeoutMs` passes.
 */
export async function waitFor(probe: () => Promise<boolean>, opts: WaitOptions): Promise<number> {
  const start = Date.now();
  const interval = opts.intervalMs ?? 250;
  for (;;) {
    const reason = opts.giveUp?.();
    if (reason !== undefined) throw new Error(`${opts.what}: ${reason}`);
    if (await probe().catch(() => false)) return Date.now() - start;
    if (Date.now() - start > opts.timeoutMs) {
      throw new Error(`${opts.what} did not answer within ${Math.round(opts.timeoutMs / 1000)} s`);
    }
    await new Promise((r) => setTimeout(r, interval));
  }
}

/** True when something accepts TCP connections on host:port (used to refuse taken ports). */
export function isPortOpen(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (open: boolean): void => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
