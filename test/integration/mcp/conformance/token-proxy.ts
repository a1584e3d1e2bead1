import { createServer, request, type Server } from 'node:http';

/**
 * An HTTP proxy that adds `Authorization: Bearer <token>` to every request and forwards it,
 * headers (Host included) and body unchanged, streaming the answer back. The conformance CLI has
 * no option to send a token; this lets it test the gateway as deployed — authentication on —
 * instead of a gateway with authentication switched off.
 */
export async function startTokenProxy(
  target: URL,
  token: () => string,
  port: number,
): Promise<{ readonly url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, authorization: `Bearer ${token()}` },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${port}${target.pathname}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
