import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A page on another site than the console's (127.0.0.2, where the console is on 127.0.0.1: another
 * host, so another site for the browser), as a pager, chat or a hostile page would serve it. `html`
 * is its body; the server answers every path with it.
 */
export async function otherSite(html: string): Promise<{ readonly url: string; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><body>${html}</body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.2:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
