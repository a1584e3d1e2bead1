import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { scrubText } from './secret-scrub.js';

/** What a readiness probe reports: ready, and each check's verdict (true, or why not). */
export interface Readiness {
  readonly ready: boolean;
  readonly checks: Readonly<Record<string, boolean | string>>;
}

/** What {@link startHealthServer} serves. */
export interface HealthServerOptions {
  /** 0 picks a free port (see the returned `port`). */
  readonly port: number;
  /** Interface to bind (default "0.0.0.0": a scraper or kubelet reaches the pod's address). */
  readonly host?: string;
  readonly registry: Registry;
  /** Asked on every GET /readyz; should be quick (its own I/O bounded). */
  readonly readiness: () => Promise<Readiness>;
  /** A readiness answer slower than this counts as not ready (default 5000 ms). */
  readonly readinessTimeoutMs?: number;
}

/** A running health server. */
export interface HealthServer {
  /** The bound port (the chosen one when `port` was 0). */
  readonly port: number;
  /** Stops listening and closes open connections (scrapers keep them alive). Idempotent. */
  close(): Promise<void>;
}

/**
 * The operations endpoint of a service, on node:http:
 * - `GET /metrics`: the registry in Prometheus text format (500 when a collector fails);
 * - `GET /healthz`: 200 while the process can answer at all (liveness: restart me if this fails);
 * - `GET /readyz`: 200 with the checks when `readiness()` says ready, else 503 with
 *   `{ ready: false, failed: {…}, checks: {…} }`; a readiness function that throws or exceeds
 *   `readinessTimeoutMs` is answered 503 with check `readiness` set to the reason.
 * HEAD is answered like GET without a body; other methods get 405, other paths 404. The server
 * holds no state between requests and writes nothing but the answers (no access log).
 * Resolves once listening; rejects when the port cannot be bound.
 */
export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const timeoutMs = options.readinessTimeoutMs ?? 5000;
  const server = createServer((req, res) => {
    handle(req, res, options, timeoutMs).catch(() => {
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'internal error\n', false);
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    server.listen(options.port, options.host ?? '0.0.0.0', () => {
      server.off('error', onError);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  options: HealthServerOptions,
  timeoutMs: number,
): Promise<void> {
  const path = (req.url ?? '/').split('?', 1)[0];
  const known = path === '/metrics' || path === '/healthz' || path === '/readyz';
  if (!known) return send(res, 404, 'text/plain; charset=utf-8', 'not found\n', false);
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n', false);
  }
  const head = req.method === 'HEAD';
  if (path === '/healthz') return send(res, 200, JSON_TYPE, '{"status":"ok"}\n', head);
  if (path === '/metrics') {
    let text: string;
    try {
      text = await options.registry.metrics();
    } catch {
      return send(res, 500, 'text/plain; charset=utf-8', 'metrics collection failed\n', head);
    }
    return send(res, 200, options.registry.contentType, text, head);
  }
  const readiness = await askReadiness(options.readiness, timeoutMs);
  const failed = Object.fromEntries(Object.entries(readiness.checks).filter(([, v]) => v !== true));
  const body = readiness.ready
    ? { ready: true, checks: readiness.checks }
    : { ready: false, failed, checks: readiness.checks };
  return send(res, readiness.ready ? 200 : 503, JSON_TYPE, `${JSON.stringify(body)}\n`, head);
}

const JSON_TYPE = 'application/json; charset=utf-8';

async function askReadiness(readiness: () => Promise<Readiness>, timeoutMs: number): Promise<Readiness> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const answer = await Promise.race([
      Promise.resolve().then(readiness),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    if (answer === null || typeof answer !== 'object' || typeof answer.ready !== 'boolean') {
      return { ready: false, checks: { readiness: 'malformed readiness answer' } };
    }
    return { ready: answer.ready, checks: scrubChecks(answer.checks ?? {}) };
  } catch (err) {
    return {
      ready: false,
      checks: { readiness: scrubText(err instanceof Error ? err.message : String(err)) },
    };
  } finally {
    clearTimeout(timer);
  }
}

/** Check reasons are often error messages; the endpoint is unauthenticated, so credentials go. */
function scrubChecks(checks: Readonly<Record<string, boolean | string>>): Record<string, boolean | string> {
  const out: Record<string, boolean | string> = {};
  for (const [name, verdict] of Object.entries(checks)) {
    out[name] = typeof verdict === 'string' ? scrubText(verdict) : verdict === true;
  }
  return out;
}

function send(res: ServerResponse, status: number, type: string, body: string, head: boolean): void {
  res.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  res.end(head ? undefined : body);
}
