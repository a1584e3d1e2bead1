import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the scripted server saw it. */
export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

export type Handler = (req: SeenRequest, res: ServerResponse) => void | Promise<void>;

/** A loopback HTTP server whose answers a test scripts, recording every request it receives. */
export interface ScriptedServer {
  readonly url: string;
  readonly seen: SeenRequest[];
  handle(handler: Handler): void;
  close(): Promise<void>;
}

export async function scriptedServer(): Promise<ScriptedServer> {
  let handler: Handler = (_req, res) => {
    res.writeHead(500).end();
  };
  const seen: SeenRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request: SeenRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      seen.push(request);
      void Promise.resolve(handler(request, res)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    handle(h) {
      handler = h;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Answers `status` with a JSON body and extra headers. */
export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(text);
}
