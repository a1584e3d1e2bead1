import { Cluster, Redis, type RedisOptions } from 'ioredis';

/** The URL scheme that names a Redis Cluster by its seed nodes: `redis-cluster://h1:p1,h2:p2,…`. */
export const REDIS_CLUSTER_SCHEME = 'redis-cluster:';

/** A Redis Cluster URL taken apart: its seed nodes and the credentials every node is sent. */
export interface RedisClusterTarget {
  readonly seeds: readonly { readonly host: string; readonly port: number }[];
  readonly username?: string;
  readonly password?: string;
}

/**
 * Parses `redis-cluster://[[user]:password@]host:port,host:port,…`; undefined for any other URL.
 * Throws on a cluster URL without seeds or with a seed that is not host:port.
 */
export function parseRedisClusterUrl(url: string): RedisClusterTarget | undefined {
  const scheme = `${REDIS_CLUSTER_SCHEME}//`;
  if (!url.startsWith(scheme)) return undefined;
  const rest = url.slice(scheme.length).replace(/\/.*$/, '');
  const at = rest.lastIndexOf('@');
  const hosts = (at === -1 ? rest : rest.slice(at + 1)).split(',').filter(Boolean);
  if (hosts.length === 0) throw new Error(`${scheme} needs at least one host:port seed`);
  const seeds = hosts.map((seed) => {
    const match = /^([^:]+):(\d{1,5})$/.exec(seed);
    if (match === null) throw new Error(`Redis Cluster seed '${seed}' is not host:port`);
    return { host: match[1]!, port: Number(match[2]) };
  });
  if (at === -1) return { seeds };
  const credentials = rest.slice(0, at);
  const colon = credentials.indexOf(':');
  const username = colon === -1 ? '' : decodeURIComponent(credentials.slice(0, colon));
  const password = decodeURIComponent(colon === -1 ? credentials : credentials.slice(colon + 1));
  return { seeds, ...(username === '' ? {} : { username }), password };
}

/**
 * The client options every toolgate service connects with (see `openRedis` in libs/runtime):
 *
 * - `maxRetriesPerRequest: 2`: a command fails after two reconnection attempts instead of waiting
 *   forever, so a call whose store is down is refused or left UNRESOLVED rather than hung.
 * - `enableAutoPipelining: true`: commands issued while the event loop turns (the rate-limit takes,
 *   idempotency claims and completions of all calls in flight) leave in one write, one pipeline
 *   per node, instead of one write each. Each command keeps its own reply and error, and one
 *   client's commands reach a node in the order they were issued. Measured in the executor's
 *   throughput benchmark: about 17 % less CPU per call (BENCHMARKS.md, "Throughput").
 */
export const SERVICE_REDIS_OPTIONS: Readonly<RedisOptions> = Object.freeze({
  maxRetriesPerRequest: 2,
  enableAutoPipelining: true,
});

/**
 * A client for `url`: a single server for `redis://` / `rediss://` URLs, an ioredis `Cluster` for a
 * `redis-cluster://` URL (see {@link parseRedisClusterUrl}; the client learns the rest of the
 * cluster from the seeds and follows MOVED / ASK redirections itself). `options` apply to every
 * connection; for a cluster, `lazyConnect`, `retryStrategy` and `enableAutoPipelining` apply to the
 * cluster client as a whole (it pipelines per node).
 */
export function connectRedis(url: string, options: RedisOptions = {}): Redis | Cluster {
  const cluster = parseRedisClusterUrl(url);
  if (cluster === undefined) return new Redis(url, options);
  const { lazyConnect, retryStrategy, enableAutoPipelining, ...nodeOptions } = options;
  return new Cluster([...cluster.seeds], {
    ...(lazyConnect === undefined ? {} : { lazyConnect }),
    ...(enableAutoPipelining === undefined ? {} : { enableAutoPipelining }),
    ...(retryStrategy == null ? {} : { clusterRetryStrategy: (times: number) => retryStrategy(times) }),
    redisOptions: {
      ...nodeOptions,
      ...(cluster.username === undefined ? {} : { username: cluster.username }),
      ...(cluster.password === undefined ? {} : { password: cluster.password }),
    },
  });
}
