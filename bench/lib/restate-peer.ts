/**
 * Restate as a same-run peer: the durable-execution engine a user would otherwise pick for durable
 * tool execution. The benchmark installs it on demand into a cache (not with `npm ci`: the server
 * binary is over 200 MB), starts the server and a service endpoint on free loopback ports, registers
 * the endpoint, and stops both afterwards.
 *
 * A call is one invocation of the `bench/noop` handler (one `ctx.run` step, restate-service.ts)
 * through the ingress, with an `idempotency-key` header: durable, deduplicated, journaled — the
 * closest equivalent of one guarded toolgate call.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../test/helpers/ports.js';
import { note } from './report.js';
import { siblingModule } from './sibling-module.js';

export const RESTATE_SERVER_VERSION = '1.7.12';
export const RESTATE_SDK_VERSION = '1.17.2';

const CACHE = join(
  process.env.TOOLGATE_CACHE_DIR ?? join(homedir(), '.cache', 'toolgate'),
  `restate-${RESTATE_SERVER_VERSION}-sdk-${RESTATE_SDK_VERSION}`,
);
const BINARY = join(
  CACHE,
  'node_modules',
  '@restatedev',
  'restate-server-linux-x64',
  'bin',
  'restate-server',
);
const SDK_ENTRY = join(CACHE, 'node_modules', '@restatedev', 'restate-sdk', 'dist', 'index.js');
const SERVICE = siblingModule('restate-service', import.meta.url);

/** A running Restate server with the bench service registered. */
export interface RestatePeer {
  readonly version: string;
  /** One durable invocation of the no-op handler; rejects unless the ingress answers 200. */
  call(n: number, idempotencyKey: string): Promise<void>;
  close(): Promise<void>;
}

/** Installs the server and SDK into the cache when they are not there yet (npm, a few seconds). */
async function ensureInstalled(): Promise<void> {
  if (existsSync(BINARY) && existsSync(SDK_ENTRY)) return;
  mkdirSync(CACHE, { recursive: true });
  writeFileSync(join(CACHE, 'package.json'), '{"name":"toolgate-bench-restate","private":true}\n');
  note(`installing Restate ${RESTATE_SERVER_VERSION} and its SDK ${RESTATE_SDK_VERSION} into ${CACHE}`);
  await run('npm', [
    'install',
    '--no-audit',
    '--no-fund',
    '--prefix',
    CACHE,
    `@restatedev/restate-server@${RESTATE_SERVER_VERSION}`,
    `@restatedev/restate-sdk@${RESTATE_SDK_VERSION}`,
  ]);
  if (!existsSync(BINARY)) throw new Error(`the Restate server binary is not at ${BINARY} after installing`);
}

function run(command: string, args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} exited ${code}`)),
    );
  });
}

async function until(what: string, ms: number, ready: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await ready().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`${what} was not ready within ${ms} ms`);
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(killer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Installs (if needed) and starts Restate and the bench service; resolves once a call can be made. */
export async function startRestatePeer(): Promise<RestatePeer> {
  await ensureInstalled();
  const ports = new Set<number>();
  while (ports.size < 4) ports.add(await freePort());
  const [ingress, admin, fabric, service] = [...ports] as [number, number, number, number];
  const baseDir = mkdtempSync(join(tmpdir(), 'toolgate-bench-restate-'));
  const children: ChildProcess[] = [];
  const close = async (): Promise<void> => {
    for (const child of children.reverse()) await stop(child);
    rmSync(baseDir, { recursive: true, force: true });
  };
  try {
    const server = spawn(BINARY, ['--no-logo'], {
      cwd: baseDir,
      stdio: 'ignore',
      env: {
        ...process.env,
        RESTATE_BASE_DIR: baseDir,
        RESTATE_LISTEN_MODE: 'tcp',
        RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ingress}`,
        RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${admin}`,
        RESTATE_BIND_ADDRESS: `127.0.0.1:${fabric}`,
        RESTATE_ADVERTISED_ADDRESS: `http://127.0.0.1:${fabric}`,
        RESTATE_DISABLE_TELEMETRY: 'true',
      },
    });
    children.push(server);
    const endpoint = spawn(
      process.execPath,
      [...SERVICE.execArgv, SERVICE.path, pathToFileURL(SDK_ENTRY).href, String(service)],
      {
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    children.push(endpoint);
    const serving = new Promise<void>((resolve, reject) => {
      endpoint.once('exit', (code) => reject(new Error(`the Restate service endpoint exited ${code}`)));
      endpoint.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('listening')) resolve();
      });
    });
    await until(
      'the Restate admin API',
      60_000,
      async () => (await fetch(`http://127.0.0.1:${admin}/health`)).ok,
    );
    await serving;
    const registered = await fetch(`http://127.0.0.1:${admin}/deployments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ uri: `http://127.0.0.1:${service}` }),
    });
    if (!registered.ok) throw new Error(`registering the bench service: HTTP ${registered.status}`);
    const url = `http://127.0.0.1:${ingress}/bench/noop`;
    const call = async (n: number, idempotencyKey: string): Promise<void> => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
        body: JSON.stringify({ n }),
      });
      await response.arrayBuffer();
      if (!response.ok) throw new Error(`Restate answered HTTP ${response.status}`);
    };
    // The ingress learns of the deployment asynchronously: the first call may need a moment.
    await until('the Restate ingress', 30_000, async () => {
      await call(-1, `warm-${Date.now()}`);
      return true;
    });
    return { version: RESTATE_SERVER_VERSION, call, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * Calls/s of `calls` invocations with `concurrency` in flight (each a fresh idempotency key), from
 * the first send to the last answer: Restate's counterpart of an executor draining a backlog.
 */
export async function restateThroughput(
  peer: RestatePeer,
  calls: number,
  concurrency: number,
): Promise<number> {
  const run = `${process.pid}-${Date.now()}`;
  let next = 0;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    while (next < calls) {
      const n = next++;
      await peer.call(n, `tp-${run}-${n}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, () => worker()));
  return calls / ((performance.now() - started) / 1000);
}
