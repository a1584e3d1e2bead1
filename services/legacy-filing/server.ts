import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type pg from 'pg';
import { systemClock } from '../../libs/core/system-clock.js';
import { silentLogger, type Logger } from '../../libs/ports/logger.js';
import type { Clock } from '../../libs/core/clock.js';
import { LegacyFaults } from './faults.js';
import { filingsByNaturalKey, insertWithinWindow } from './filing-store.js';
import { validateSubmission } from './validate-submission.js';
import { LEGACY_FAULTS, LEGACY_KEY_PARAMS } from './wire.js';

/** Options of {@link startLegacyFilingServer}. */
export interface LegacyFilingServerOptions {
  /** Where the filings live (the pool's current schema); the table must exist. */
  readonly pool: pg.Pool;
  /** Default 127.0.0.1: the fake never listens beyond loopback. */
  readonly host?: string;
  /** Default 0 (any free port). */
  readonly port?: number;
  /** A submission is committed within this long after it arrived, or not at all. */
  readonly commitWindowMs: number;
  readonly faults?: LegacyFaults;
  /** How long a `slow` fault delays the work. Default 0. */
  readonly slowMs?: number;
  readonly clock?: Clock;
  readonly logger?: Logger;
}

/** Counters of what the service saw (for tests and the lab's summary). */
export interface LegacyFilingStats {
  submits: number;
  committed: number;
  rejected: number;
  droppedAfterCommit: number;
  droppedBeforeCommit: number;
  slowed: number;
  abandonedByWindow: number;
  lookups: number;
  lookupFailures: number;
}

/** A running fake legacy filing service. */
export interface LegacyFilingServer {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  readonly faults: LegacyFaults;
  stats(): Readonly<LegacyFilingStats>;
  /** Stops listening and cuts open connections. */
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 64 * 1024;

/**
 * A fake legacy filing service on real HTTP, backed by Postgres. Two endpoints and nothing else —
 * no idempotency keys, no request ids:
 * - `POST /filings`: validates (business faults answer HTTP 200 `{"Result":"REJECTED",
 *   "FaultCode":…}`, the legacy way), commits the filing within the commit window — and before the
 *   request's own `ExpiresAt`, when it has one, checked by the database at commit — or abandons it
 *   (then 503, or nothing if the caller already left), and answers 201 `{"Result":"ACCEPTED",
 *   "Filing":…}`. Faults: `drop-after-commit` destroys the socket AFTER the commit (the filing
 *   exists, the caller never hears); `drop-before-commit` destroys it before doing anything;
 *   `slow` delays the work by `slowMs` (it may then miss its window and be abandoned).
 * - `GET /filings?TenantId=&FilerId=&FormType=&Period=`: every filing under that natural key,
 *   oldest first (`{"Filings":[…]}`); a `statusFailure` fault answers 503.
 * A second submission with the same natural key is stored as a second filing, as legacy systems do.
 */
export async function startLegacyFilingServer(
  options: LegacyFilingServerOptions,
): Promise<LegacyFilingServer> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  const faults = options.faults ?? new LegacyFaults();
  const stats: LegacyFilingStats = {
    submits: 0,
    committed: 0,
    rejected: 0,
    droppedAfterCommit: 0,
    droppedBeforeCommit: 0,
    slowed: 0,
    abandonedByWindow: 0,
    lookups: 0,
    lookupFailures: 0,
  };

  const submit = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const receivedAtMs = clock.now();
    stats.submits += 1;
    const body = await readJson(req);
    const checked = validateSubmission(body, receivedAtMs);
    if (!checked.ok) {
      stats.rejected += 1;
      return send(res, 200, {
        Result: 'REJECTED',
        FaultCode: checked.fault,
        FaultText: LEGACY_FAULTS[checked.fault],
      });
    }
    const fault = faults.submitFault();
    if (fault === 'drop-before-commit') {
      stats.droppedBeforeCommit += 1;
      req.socket.destroy();
      return;
    }
    if (fault === 'slow') stats.slowed += 1;
    const slowMs = options.slowMs ?? 0;
    const result = await insertWithinWindow(options.pool, checked.filing, {
      receivedAtMs,
      commitWindowMs: options.commitWindowMs,
      ...(checked.expiresAtMs === undefined ? {} : { expiresAtMs: checked.expiresAtMs }),
      clock,
      ...(fault === 'slow' && slowMs > 0 ? { beforeInsert: () => clock.sleep(slowMs) } : {}),
    });
    if (result.kind === 'abandoned') {
      stats.abandonedByWindow += 1;
      return send(res, 503, { Result: 'ERROR', FaultCode: 'S903', FaultText: 'TIMED OUT - NOT RECORDED' });
    }
    stats.committed += 1;
    if (fault === 'drop-after-commit') {
      stats.droppedAfterCommit += 1;
      req.socket.destroy();
      return;
    }
    send(res, 201, { Result: 'ACCEPTED', Filing: result.record });
  };

  const lookup = async (url: URL, res: ServerResponse): Promise<void> => {
    stats.lookups += 1;
    if (faults.statusFails()) {
      stats.lookupFailures += 1;
      return send(res, 503, { Result: 'ERROR', FaultCode: 'S901', FaultText: 'SYSTEM BUSY' });
    }
    const values = LEGACY_KEY_PARAMS.map((name) => url.searchParams.get(name) ?? '');
    if (values.some((v) => v.length === 0 || v.length > 200)) {
      return send(res, 400, { Result: 'REJECTED', FaultCode: 'F100', FaultText: LEGACY_FAULTS.F100 });
    }
    const [TenantId, FilerId, FormType, Period] = values as [string, string, string, string];
    const filings = await filingsByNaturalKey(options.pool, { TenantId, FilerId, FormType, Period });
    send(res, 200, { Filings: filings });
  };

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://legacy.invalid');
    const route =
      url.pathname === '/filings' && req.method === 'POST'
        ? submit(req, res)
        : url.pathname === '/filings' && req.method === 'GET'
          ? lookup(url, res)
          : Promise.resolve(send(res, url.pathname === '/filings' ? 405 : 404, { Result: 'ERROR' }));
    route.catch((err: unknown) => {
      logger.error({ err: err instanceof Error ? err.message : String(err) }, 'request failed');
      if (err instanceof BodyError) return send(res, err.status, { Result: 'REJECTED', FaultCode: 'F100' });
      if (!res.headersSent && !res.destroyed)
        send(res, 500, { Result: 'ERROR', FaultCode: 'S900', FaultText: 'SYSTEM ERROR' });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const url = `http://${address.address}:${address.port}`;
  logger.info(
    { url, commitWindowMs: options.commitWindowMs, faults: faults.rates },
    'legacy filing service listening',
  );
  return {
    url,
    faults,
    stats: () => ({ ...stats }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

class BodyError extends Error {
  constructor(readonly status: number) {
    super(`request body refused (${status})`);
  }
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new BodyError(413);
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
