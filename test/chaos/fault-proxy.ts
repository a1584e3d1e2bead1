import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * What a proxy does to the connections of one source host. Absent fields: no such fault.
 * - `latencyMs`: every chunk, in both directions, is held a uniform random time in [min, max]
 *   (order is kept: a chunk never overtakes an earlier one of the same direction).
 * - `resetEvery`: every N-th chunk the proxy takes under these faults (counted over all of the
 *   proxy's connections with them, both directions) is not forwarded: both sides of its connection
 *   get a TCP RST instead. A count, not a chance, so a run of a given length always sees its resets.
 * - `blackhole`: nothing is forwarded and nothing is read (TCP back-pressure stalls the senders);
 *   new connections are accepted and held. Lifting it delivers what waited, as a healed network
 *   would after retransmission.
 * - `refuse`: every open connection gets a TCP RST at once and new ones get one on accept, as from
 *   a host that is up but rejects the traffic.
 */
export interface LinkFaults {
  readonly latencyMs?: readonly [number, number];
  readonly resetEvery?: number;
  readonly blackhole?: boolean;
  readonly refuse?: boolean;
}

export interface FaultProxyStats {
  readonly connections: number;
  readonly resets: number;
  readonly bytes: number;
}

/**
 * A TCP proxy of the suite's own in front of one server: `listen` → `target`. Faults are set per
 * source address (the host a connection comes from), so one proxy can slow one executor's link to
 * a server while another executor's stays clean.
 */
export interface FaultProxy {
  /** `host:port` clients connect to. */
  readonly address: string;
  readonly host: string;
  readonly port: number;
  /** Sets the faults for connections from `sources` (default: every source); `{}` clears them. */
  setFaults(faults: LinkFaults, sources?: readonly string[]): void;
  stats(): FaultProxyStats;
  /** Closes the listener and every connection. */
  close(): Promise<void>;
}

const CLEAN: LinkFaults = {};

function plainAddress(address: string | undefined): string {
  return (address ?? '').replace(/^::ffff:/, '');
}

/** One direction of one connection: chunks from `from`, written to `to` when due. */
class Lane {
  private readonly queue: Array<{ chunk: Buffer; dueAt: number }> = [];
  private lastDueAt = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly from: Socket,
    private readonly to: () => Socket | undefined,
    private readonly faults: () => LinkFaults,
    private readonly onReset: () => void,
    private readonly onBytes: (n: number) => void,
    private readonly resetDue: (faults: LinkFaults) => boolean,
  ) {
    from.on('data', (chunk: Buffer) => this.take(chunk));
  }

  private take(chunk: Buffer): void {
    const f = this.faults();
    if (this.resetDue(f)) {
      this.onReset();
      return;
    }
    const [min, max] = f.latencyMs ?? [0, 0];
    const dueAt = Math.max(this.lastDueAt, Date.now() + min + Math.random() * (max - min));
    this.lastDueAt = dueAt;
    this.queue.push({ chunk, dueAt });
    this.kick();
  }

  /** Writes what is due, pauses reading while black-holed, and schedules the next chunk. */
  kick(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const target = this.to();
    if (this.faults().blackhole === true || target === undefined) {
      this.from.pause();
      return;
    }
    if (this.from.isPaused() && !this.from.destroyed) this.from.resume();
    const now = Date.now();
    while (this.queue.length > 0 && this.queue[0]!.dueAt <= now) {
      const { chunk } = this.queue.shift()!;
      this.onBytes(chunk.length);
      if (!target.destroyed) target.write(chunk);
    }
    if (this.queue.length > 0) this.timer = setTimeout(() => this.kick(), this.queue[0]!.dueAt - now);
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.queue.length = 0;
  }
}

/** Starts a proxy listening on `listen` (port 0 = any free one) forwarding to `target`. */
export async function startFaultProxy(
  listen: { readonly host: string; readonly port?: number },
  target: { readonly host: string; readonly port: number },
): Promise<FaultProxy> {
  const bySource = new Map<string, LinkFaults>();
  let everyone: LinkFaults = CLEAN;
  const live = new Set<{ kick(): void; destroy(): void }>();
  let connections = 0;
  let resets = 0;
  let bytes = 0;
  let chunksToReset = 0;
  /** Counts a chunk taken under `f`: true when it is the `resetEvery`-th since the last reset. */
  const resetDue = (f: LinkFaults): boolean => {
    if (f.resetEvery === undefined || f.resetEvery < 1) return false;
    chunksToReset += 1;
    if (chunksToReset < f.resetEvery) return false;
    chunksToReset = 0;
    return true;
  };

  const server: Server = createServer({ pauseOnConnect: true }, (client) => {
    connections += 1;
    const source = plainAddress(client.remoteAddress);
    const faults = (): LinkFaults => bySource.get(source) ?? everyone;
    let upstream: Socket | undefined;
    let closed = false;
    const reset = (): void => {
      if (closed) return;
      resets += 1;
      destroy(true);
    };
    const destroy = (hard = false): void => {
      if (closed) return;
      closed = true;
      live.delete(entry);
      up.dispose();
      down?.dispose();
      if (hard) {
        client.resetAndDestroy();
        upstream?.resetAndDestroy();
      } else {
        client.destroy();
        upstream?.destroy();
      }
    };
    const up = new Lane(
      client,
      () => upstream,
      faults,
      reset,
      (n) => (bytes += n),
      resetDue,
    );
    let down: Lane | undefined;
    const entry = {
      kick: () => {
        if (faults().refuse === true) {
          reset();
          return;
        }
        // A connection accepted while black-holed reaches the server only once the hole is lifted.
        if (upstream === undefined && faults().blackhole !== true && !closed) openUpstream();
        up.kick();
        down?.kick();
      },
      destroy: () => destroy(),
    };
    const openUpstream = (): void => {
      const socket = connect({ host: target.host, port: target.port });
      upstream = socket;
      down = new Lane(
        socket,
        () => client,
        faults,
        reset,
        (n) => (bytes += n),
        resetDue,
      );
      socket.setNoDelay(true);
      socket.on('connect', () => entry.kick());
      socket.on('error', () => destroy());
      socket.on('close', () => destroy());
    };
    live.add(entry);
    client.setNoDelay(true);
    client.on('error', () => destroy());
    client.on('close', () => destroy());
    entry.kick();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port ?? 0, listen.host, () => resolve());
  });
  const { port } = server.address() as { port: number };
  return {
    address: `${listen.host}:${port}`,
    host: listen.host,
    port,
    setFaults(faults, sources) {
      if (sources === undefined) {
        everyone = faults;
        bySource.clear();
      } else for (const s of sources) bySource.set(s, faults);
      for (const c of live) c.kick();
    },
    stats: () => ({ connections, resets, bytes }),
    async close() {
      for (const c of [...live]) c.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
