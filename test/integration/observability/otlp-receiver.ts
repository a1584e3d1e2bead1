import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST the receiver accepted. */
export interface OtlpRequest {
  readonly path: string;
  readonly contentType: string;
  readonly body: Buffer;
}

/** A span from an OTLP/JSON export, flattened with its resource and scope. */
export interface ReceivedSpan {
  readonly serviceName: string | undefined;
  readonly scope: string | undefined;
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
}

/**
 * A local OTLP/HTTP trace receiver: a plain node:http server on 127.0.0.1 that answers
 * `POST /v1/traces` with 200 `{}` (a full success, as a collector answers) and records every
 * request; any other request gets 404 and is recorded too, so a test can see a wrong path.
 */
export interface OtlpReceiver {
  /** The base endpoint, as OTEL_EXPORTER_OTLP_ENDPOINT takes it (no /v1/traces). */
  readonly endpoint: string;
  readonly requests: readonly OtlpRequest[];
  /** Every span of every OTLP/JSON request so far. */
  spans(): ReceivedSpan[];
  /** Resolves once `predicate` holds for the spans received (checked now and on every request). */
  until(predicate: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

/**
 * Starts a receiver on a free port of 127.0.0.1, or on `port` of every local address (IPv4 and
 * IPv6, so `localhost` reaches it whichever it resolves to).
 */
export async function startOtlpReceiver(port?: number): Promise<OtlpReceiver> {
  const requests: OtlpRequest[] = [];
  const waiters: Array<() => void> = [];
  const server = createServer((req, res) => void accept(req, res));
  async function accept(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const path = req.url ?? '';
    requests.push({ path, contentType: req.headers['content-type'] ?? '', body: Buffer.concat(chunks) });
    if (req.method === 'POST' && path === '/v1/traces') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    } else {
      res.writeHead(404).end();
    }
    for (const wake of waiters.splice(0)) wake();
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if (port === undefined) server.listen(0, '127.0.0.1', resolve);
    else server.listen(port, resolve);
  });
  const bound = (server.address() as AddressInfo).port;
  const spans = (): ReceivedSpan[] =>
    requests.filter((r) => r.contentType.startsWith('application/json')).flatMap((r) => decodeJson(r.body));
  return {
    endpoint: `http://127.0.0.1:${bound}`,
    requests,
    spans,
    async until(predicate) {
      for (;;) {
        const now = spans();
        if (predicate(now)) return now;
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

interface JsonAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean };
}

interface JsonExport {
  resourceSpans?: Array<{
    resource?: { attributes?: JsonAttribute[] };
    scopeSpans?: Array<{
      scope?: { name?: string };
      spans?: Array<{
        name: string;
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        attributes?: JsonAttribute[];
      }>;
    }>;
  }>;
}

/** The spans of an ExportTraceServiceRequest in the OTLP/JSON encoding (ids as hex strings). */
export function decodeJson(body: Buffer): ReceivedSpan[] {
  const parsed = JSON.parse(body.toString('utf8')) as JsonExport;
  return (parsed.resourceSpans ?? []).flatMap((rs) => {
    const resource = attributesOf(rs.resource?.attributes);
    const serviceName = resource['service.name'];
    return (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s) => ({
        serviceName: typeof serviceName === 'string' ? serviceName : undefined,
        scope: ss.scope?.name,
        name: s.name,
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId ?? '',
        attributes: attributesOf(s.attributes),
      })),
    );
  });
}

function attributesOf(list: JsonAttribute[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    const v = value.stringValue ?? value.boolValue ?? value.doubleValue ?? value.intValue;
    if (v !== undefined) out[key] = typeof v === 'string' && value.intValue !== undefined ? Number(v) : v;
  }
  return out;
}
