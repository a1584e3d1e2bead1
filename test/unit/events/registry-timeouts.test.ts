import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ToolgateError } from '../../../libs/core/errors.js';
import { RegistryEventCodec } from '../../../libs/events/registry-codec.js';
import { topicNames } from '../../../libs/events/topics.js';
import { frame } from '../../../libs/events/wire-format.js';

/**
 * A registry that answers some requests and leaves others hanging: accepts the connection, reads
 * the request, never writes a byte. Counts requests by path.
 */
async function stallingRegistry(answers: (req: http.IncomingMessage) => unknown) {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => {
      const body = answers(req);
      if (body === undefined) return; // the stall
      res.writeHead(200, { 'content-type': 'application/vnd.schemaregistry.v1+json' });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('a registry that stops answering', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  it('fails start-up with an error after its retries instead of waiting forever', async () => {
    const registry = await stallingRegistry(() => undefined);
    close = registry.close;
    const created = RegistryEventCodec.create({
      url: registry.url,
      topics: topicNames('stall'),
      requestTimeoutMs: 150,
    });
    await expect(created).rejects.toThrow(/Timeout \(150ms\)/);
    // The first request and its three retries, each abandoned.
    expect(registry.seen).toHaveLength(4);
  });

  it('answers a decode of an unknown schema id with DEPENDENCY_UNAVAILABLE, not a hang', async () => {
    // Registration answers (the subject's compatibility, then the schema's id); the lookup of a
    // writer schema by id never does.
    const registry = await stallingRegistry((req) => {
      if (req.url?.startsWith('/schemas/ids/')) return undefined;
      return req.url?.startsWith('/config/') ? { compatibilityLevel: 'BACKWARD' } : { id: 1 };
    });
    close = registry.close;
    const codec = await RegistryEventCodec.create({
      url: registry.url,
      topics: topicNames('stall'),
      requestTimeoutMs: 150,
    });
    const decoded = codec.decode('calls', frame(77, Buffer.from([0])));
    await expect(decoded).rejects.toSatisfy(
      (error: unknown) => error instanceof ToolgateError && error.code === 'DEPENDENCY_UNAVAILABLE',
    );
    expect(registry.seen.filter((line) => line.startsWith('GET /schemas/ids/77'))).toHaveLength(4);
  });
});
