/**
 * tools/call round trip through the MCP gateway (bearer check, SDK publish to Kafka, executor guard
 * pipeline, result back on the gateway's reply partition) next to the same tool on a bare MCP
 * server from the same SDK (createMcpHandler, tool body in-process), in the same run, alternating.
 * Both are driven by the official v2 client at 2026-07-28 over HTTP on 127.0.0.1, `--concurrency`
 * calls in flight (closed loop), `--calls` per round, `--rounds` rounds.
 *
 *   npx tsx bench/mcp-gateway.ts [--quick] [--calls N] [--concurrency C] [--rounds R]
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { createLocalJWKSet, SignJWT, type JWK } from 'jose';
import { z } from 'zod';
import { MemorySingleUseStore } from '../libs/adapters/memory/single-use-store.js';
import { systemClock } from '../libs/core/system-clock.js';
import { createMcpGateway } from '../services/mcp-gateway/gateway.js';
import { createToolgateClient } from '../services/sdk/toolgate-client.js';
import { parseArgs } from './lib/args.js';
import { benchRegistry, NOOP_TOOL } from './lib/bench-tools.js';
import { newHistogram, recordMs, summarize, type Histogram } from './lib/latency-histogram.js';
import { alternate, fmt, machineLine, median, nowMs, say, table } from './lib/report.js';
import { acquireServers } from './lib/servers.js';
import {
  AUDIENCE,
  createBenchExecutor,
  createBenchKeys,
  createBenchTopics,
  ISSUER,
  KID,
  runName,
} from './lib/toolgate-stack.js';

const args = parseArgs();
const CALLS = args.number('calls', args.quick ? 200 : 2_000);
const CONCURRENCY = args.number('concurrency', 8);
const ROUNDS = args.number('rounds', args.quick ? 2 : 3);
const GATEWAY_PORT = 18_431;
const BARE_PORT = 18_432;

const servers = await acquireServers();
const conn = { brokers: servers.brokers, registryUrl: servers.registryUrl };
const name = runName('mcp');
const run = await createBenchTopics(conn, name, { calls: 4, results: 1, audit: 1, dlq: 1 });
const keys = createBenchKeys();
const executor = await createBenchExecutor({
  conn,
  topics: run.topics,
  resultsPartitions: 1,
  jwks: keys.jwks,
  redisUrl: servers.redisUrl,
  redisPrefix: `${name}:`,
  groupId: `${name}-executors`,
  ownerId: `${name}-executor`,
  maxConcurrency: 64,
  partitionsConcurrently: 4,
});
await executor.executor.start();
const registry = benchRegistry();
const client = createToolgateClient({
  publisher: run.bus,
  subscriber: run.bus,
  codec: run.codec,
  topics: run.topics,
  instanceId: `${name}-gateway`,
  replySlot: 0,
  tools: registry,
  signing: { key: keys.privateKey, issuer: ISSUER, audience: AUDIENCE, kid: KID, ttlSeconds: 300 },
});
await client.start();

const resource = `http://127.0.0.1:${GATEWAY_PORT}/mcp`;
const as = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const gateway = createMcpGateway({
  tools: registry,
  client,
  auth: {
    issuer: 'https://bench-auth.example',
    resource,
    jwks: createLocalJWKSet({ keys: [{ ...(as.publicKey.export({ format: 'jwk' }) as JWK), kid: 'as' }] }),
  },
  principal: { tenant: 't1', gatewayScopes: ['mcp:tools'] },
  allowedHosts: ['127.0.0.1'],
  confirmations: { secret: randomBytes(32), store: new MemorySingleUseStore(systemClock) },
});
await gateway.listen(GATEWAY_PORT, '127.0.0.1');
const token = await new SignJWT({ scope: 'mcp:tools' })
  .setProtectedHeader({ alg: 'ES256', kid: 'as' })
  .setIssuer('https://bench-auth.example')
  .setSubject('bench-user')
  .setAudience(resource)
  .setExpirationTime('1h')
  .sign(as.privateKey);

// The bare server: the same tool body, registered on a plain McpServer per request.
const bare = createMcpHandler(() => {
  const server = new McpServer({ name: 'bare', version: '1.0.0' });
  server.registerTool(
    NOOP_TOOL,
    { inputSchema: z.object({ n: z.number().int() }), outputSchema: z.object({ n: z.number().int() }) },
    ({ n }) =>
      Promise.resolve({ content: [{ type: 'text', text: JSON.stringify({ n }) }], structuredContent: { n } }),
  );
  return server;
});
const serveBare = toNodeHandler(bare);
const bareHttp = createServer((req, res) => void serveBare(req, res));
await new Promise<void>((resolve) => bareHttp.listen(BARE_PORT, '127.0.0.1', resolve));

async function connect(url: string, headers: Record<string, string>): Promise<Client> {
  const c = new Client(
    { name: 'bench', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await c.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return c;
}
const viaGateway = await connect(resource, { Authorization: `Bearer ${token}` });
const direct = await connect(`http://127.0.0.1:${BARE_PORT}/mcp`, {});

const histograms = new Map<string, Histogram>([
  ['gateway', newHistogram()],
  ['bare', newHistogram()],
]);
let sequence = 0;
/** One round: CALLS calls, CONCURRENCY at a time; resolves with calls per second. */
async function round(which: 'gateway' | 'bare', c: Client): Promise<number> {
  const h = histograms.get(which)!;
  let next = 0;
  const started = nowMs();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < CALLS) {
        next++;
        // Distinct arguments: every gateway call is a new logical call, not an idempotent repeat.
        const n = sequence++;
        const t0 = nowMs();
        const answer = await c.callTool({ name: NOOP_TOOL, arguments: { n } });
        recordMs(h, nowMs() - t0);
        if (answer.isError === true)
          throw new Error(`${which} call failed: ${JSON.stringify(answer.content)}`);
      }
    }),
  );
  return (CALLS / (nowMs() - started)) * 1000;
}

await round('gateway', viaGateway); // warm-up
await round('bare', direct);
for (const h of histograms.values()) h.reset();
const rates = await alternate(ROUNDS, [
  { name: 'gateway', run: () => round('gateway', viaGateway) },
  { name: 'bare', run: () => round('bare', direct) },
]);

say(`\nMCP tools/call round trip, ${CALLS} calls x ${ROUNDS} rounds, ${CONCURRENCY} in flight`);
say(machineLine(`Kafka: ${servers.kafkaVersion}`));
say(
  table(
    ['server', 'p50 ms', 'p99 ms', 'calls/s (median round)'],
    [...histograms].map(([which, h]) => {
      const s = summarize(h);
      return [which, fmt(s.p50, 2), fmt(s.p99, 2), fmt(median(rates.get(which)!), 0)];
    }),
  ),
);

await viaGateway.close();
await direct.close();
await new Promise<void>((resolve) => bareHttp.close(() => resolve()));
await gateway.close();
await client.stop();
await executor.close();
await run.close();
await servers.release();
