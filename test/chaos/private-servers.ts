import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { Redis } from 'ioredis';
import { freePort } from '../helpers/ports.js';

const run = promisify(execFile);
const PG_BIN = '/usr/lib/postgresql/15/bin';

/**
 * Redis and Postgres instances this suite starts for itself on free ports, so a scenario can stop
 * and restart them without touching the machine's shared servers (127.0.0.1:6379 / :5432) that
 * other test runs use. Each `stop` / `start` is a real process stop and start: clients see refused
 * connections in between, exactly as in an outage.
 */
export interface PrivateServer {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it for good and removes its files. */
  destroy(): Promise<void>;
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not come up in ${timeoutMs} ms`);
}

/** A Redis without persistence on a free port. */
export async function startPrivateRedis(): Promise<PrivateServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'tg-chaos-redis-'));
  const pidFile = join(dir, 'redis.pid');
  const url = `redis://127.0.0.1:${port}`;
  const answers = async (): Promise<boolean> => {
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      return (await probe.ping()) === 'PONG';
    } catch {
      return false;
    } finally {
      probe.disconnect();
    }
  };
  const start = async (): Promise<void> => {
    await run('redis-server', [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--daemonize',
      'yes',
      '--save',
      '',
      '--appendonly',
      'no',
      '--pidfile',
      pidFile,
      '--dir',
      dir,
    ]);
    await until(answers, `redis on ${port}`);
  };
  const stop = async (): Promise<void> => {
    await run('redis-cli', ['-p', String(port), 'shutdown', 'nosave']).catch(() => undefined);
    await until(async () => !(await answers()), `redis on ${port} stopping`);
  };
  return startedServer({ url, port, dir, start, stop });
}

/**
 * A Postgres cluster of its own (initdb, trust auth, database `test`) on a free port, run as the
 * `postgres` OS user when this process is root (initdb refuses root).
 */
export async function startPrivatePostgres(): Promise<PrivateServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'tg-chaos-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  const asPg = (cmd: string, args: string[]): Promise<unknown> =>
    process.getuid?.() === 0 ? run('runuser', ['-u', 'postgres', '--', cmd, ...args]) : run(cmd, args);
  await asPg(`${PG_BIN}/initdb`, ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const answers = async (): Promise<boolean> => {
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
    try {
      await c.connect();
      await c.query('SELECT 1');
      return true;
    } catch {
      return false;
    } finally {
      await c.end().catch(() => undefined);
    }
  };
  const start = async (): Promise<void> => {
    await asPg(`${PG_BIN}/pg_ctl`, [
      '-D',
      data,
      '-l',
      join(dir, 'log'),
      '-w',
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
      'start',
    ]);
    await until(answers, `postgres on ${port}`);
  };
  const stop = async (): Promise<void> => {
    await asPg(`${PG_BIN}/pg_ctl`, ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
  };
  return startedServer({ url, port, dir, start, stop });
}

/**
 * Starts a private server from its parts and hands it out: `destroy` stops it and removes its
 * directory `dir`.
 */
async function startedServer(parts: {
  readonly url: string;
  readonly port: number;
  readonly dir: string;
  readonly start: () => Promise<void>;
  readonly stop: () => Promise<void>;
}): Promise<PrivateServer> {
  const { url, port, dir, start, stop } = parts;
  await start();
  return {
    url,
    port,
    start,
    stop,
    async destroy() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
