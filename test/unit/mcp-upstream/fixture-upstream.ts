import { createServer, type IncomingHttpHeaders, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, Server } from '@modelcontextprotocol/server';

/** One tool the fixture serves: its listing as raw JSON (so a test can change it) and its answer. */
export interface FixtureTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  /** The answer; may wait. Throwing answers the call with a JSON-RPC error. */
  run: (args: Record<string, unknown>) => Promise<Record<string, unknown>> | Record<string, unknown>;
}

/** One HTTP request the fixture received, as it arrived. */
export interface RecordedRequest {
  readonly method: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** A small MCP server over Streamable HTTP on a random loopback port, for the upstream tests. */
export interface FixtureUpstream {
  readonly url: string;
  readonly tools: Map<string, FixtureTool>;
  /** Every HTTP request received, in order. */
  readonly requests: RecordedRequest[];
  /** How often each tool's `run` was entered. */
  invocations(name: string): number;
  /** While set, every POST is answered with this HTTP status and no MCP processing. */
  failWithStatus: number | undefined;
  /** Publishes `notifications/tools/list_changed` to open subscriptions (2026-07-28 clients). */
  notifyToolsChanged(): void;
  close(): Promise<void>;
}

/**
 * Starts the fixture: a `@modelcontextprotocol/server` `Server` per request behind
 * `createMcpHandler` (2026-07-28, and stateless 2025-11-25 for older clients), advertising
 * `tools.listChanged`. Request headers and bodies are recorded before the MCP handler sees them.
 */
export async function startFixtureUpstream(initial: readonly FixtureTool[]): Promise<FixtureUpstream> {
  const tools = new Map(initial.map((t) => [t.name, t]));
  const counts = new Map<string, number>();
  const requests: RecordedRequest[] = [];

  const handler = createMcpHandler(() => {
    const server = new Server(
      { name: 'fixture-upstream', version: '1.0.0' },
      { capabilities: { tools: { listChanged: true } } },
    );
    server.setRequestHandler('tools/list', () => ({
      tools: [...tools.values()].map((t) => ({
        name: t.name,
        ...(t.description === undefined ? {} : { description: t.description }),
        inputSchema: t.inputSchema,
        ...(t.outputSchema === undefined ? {} : { outputSchema: t.outputSchema }),
        ...(t.annotations === undefined ? {} : { annotations: t.annotations }),
      })) as never[],
    }));
    server.setRequestHandler('tools/call', async (request) => {
      const tool = tools.get(request.params.name);
      if (tool === undefined) throw new Error(`no tool ${request.params.name}`);
      counts.set(tool.name, (counts.get(tool.name) ?? 0) + 1);
      return (await tool.run(request.params.arguments ?? {})) as never;
    });
    return server;
  });
  const serveMcp = toNodeHandler(handler);

  const fixture: FixtureUpstream = {
    url: '',
    tools,
    requests,
    invocations: (name) => counts.get(name) ?? 0,
    failWithStatus: undefined,
    notifyToolsChanged: () => handler.notify.toolsChanged(),
    close: async () => {
      await handler.close();
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeAllConnections();
      await closed;
    },
  };

  const http: HttpServer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? '', headers: req.headers, body });
      if (req.method === 'POST' && fixture.failWithStatus !== undefined) {
        res.writeHead(fixture.failWithStatus, { 'content-type': 'text/plain' }).end('unavailable');
        return;
      }
      const parsed: unknown = req.method === 'POST' && body !== '' ? JSON.parse(body) : undefined;
      serveMcp(req, res, parsed).catch(() => {
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', () => resolve()));
  const { port } = http.address() as AddressInfo;
  return Object.assign(fixture, { url: `http://127.0.0.1:${port}/mcp` });
}
