import net from 'node:net';

/** A connection attempt {@link forbidOutboundNetwork} refused. */
export interface RefusedConnection {
  readonly host: string;
  readonly port: number | string;
}

export interface NetworkGuard {
  /** Every non-loopback connection attempted since the guard was installed. */
  readonly refused: readonly RefusedConnection[];
  /** Puts the original `net.Socket.prototype.connect` back. Idempotent. */
  restore(): void;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1', '0:0:0:0:0:0:0:1']);

/**
 * Makes every TCP connection to a host other than loopback fail synchronously (TLS and HTTP
 * clients connect through `net.Socket.prototype.connect`, so they are covered) and records the
 * attempt. Unix sockets and loopback stay allowed. For test suites that must prove they run
 * offline: install in `beforeAll`, assert `refused` is empty and restore in `afterAll`.
 */
export function forbidOutboundNetwork(): NetworkGuard {
  // Kept as a plain function and always applied with the socket as `this`.
  const original = Reflect.get(net.Socket.prototype, 'connect') as (
    this: net.Socket,
    ...a: unknown[]
  ) => net.Socket;
  const refused: RefusedConnection[] = [];
  const patched = function (this: net.Socket, ...args: unknown[]): net.Socket {
    const target = targetOf(args);
    if (target !== undefined && !LOOPBACK.has(target.host)) {
      refused.push(target);
      throw new Error(`outbound network refused in this test run: ${target.host}:${target.port}`);
    }
    return original.apply(this, args);
  };
  Reflect.set(net.Socket.prototype, 'connect', patched);
  let restored = false;
  return {
    refused,
    restore() {
      if (restored) return;
      restored = true;
      if (Reflect.get(net.Socket.prototype, 'connect') === patched)
        Reflect.set(net.Socket.prototype, 'connect', original);
    },
  };
}

function targetOf(args: readonly unknown[]): RefusedConnection | undefined {
  const [first, second] = args;
  const options = Array.isArray(first) ? (first[0] as unknown) : first;
  if (typeof options === 'object' && options !== null) {
    const o = options as { host?: unknown; port?: unknown; path?: unknown };
    if (typeof o.path === 'string' && o.port === undefined) return undefined;
    return { host: typeof o.host === 'string' ? o.host : 'localhost', port: o.port as number | string };
  }
  if (typeof options === 'number' || (typeof options === 'string' && /^\d+$/.test(options))) {
    return { host: typeof second === 'string' ? second : 'localhost', port: options };
  }
  return undefined;
}
