import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.js';

/** The reference MCP server's entry point (its package's `bin`); its first argument picks the transport. */
export const EVERYTHING_SERVER = fileURLToPath(
  new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url),
);

/** A running reference server on Streamable HTTP. */
export interface EverythingServer {
  readonly url: string;
  readonly child: ChildProcess;
  stop(): void;
}

/**
 * Starts `@modelcontextprotocol/server-everything` with its Streamable HTTP transport on a free
 * loopback port; resolves once it says it listens, rejects after 20 s or if it exits first.
 */
export async function startEverythingServer(): Promise<EverythingServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING_SERVER, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`server-everything did not start: ${seen}`)), 20_000);
    child.stderr.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes('listening on port')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`server-everything exited with ${code}: ${seen}`)));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, child, stop: () => child.kill('SIGTERM') };
}
