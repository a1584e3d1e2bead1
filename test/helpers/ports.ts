import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Tries to listen on `port` on 127.0.0.1; resolves with the port it got, or undefined. */
function probe(port: number): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) =>
      error.code === 'EADDRINUSE' || error.code === 'EACCES' ? resolve(undefined) : reject(error),
    );
    server.listen(port, '127.0.0.1', () => {
      const { port: got } = server.address() as { port: number };
      server.close(() => resolve(got));
    });
  });
}

/** The lowest port the kernel hands out for `listen(0)` and outgoing connections. */
function ephemeralLow(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const n = Number(low);
    return Number.isInteger(n) && n > 1024 ? n : 32_768;
  } catch {
    return 32_768;
  }
}

/** Ports the local launchers and this machine's servers use by default. */
const RESERVED = new Set([5432, 6379, 18081, 18180, 19090, 19092, 19093]);

/**
 * A port free on 127.0.0.1 a moment ago, chosen BELOW the kernel's ephemeral range. A port the OS
 * picks (`listen(0)`) lies inside that range, so between the pick and a spawned server's listen —
 * or while a test has a server stopped to restart it on the same port — any `listen(0)` or
 * outgoing connection of a parallel test can be handed it. Ports below the range are only ever
 * taken by explicit choice.
 */
export async function freePort(): Promise<number> {
  const high = ephemeralLow() - 1;
  const low = Math.min(10_000, high - 1_000);
  for (let attempt = 0; attempt < 200; attempt++) {
    const candidate = low + Math.floor(Math.random() * (high - low));
    if (RESERVED.has(candidate)) continue;
    if ((await probe(candidate)) !== undefined) return candidate;
  }
  throw new Error(`no free port between ${low} and ${high} after 200 tries`);
}
