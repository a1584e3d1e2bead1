/**
 * `npm run redis-cluster:up` / `redis-cluster:down` (also `status`): a local Redis Cluster of three
 * masters with one replica each (`tidy` stops nodes a test run started and no live run holds), on 127.0.0.1:$TOOLGATE_REDIS_CLUSTER_PORT (17001) and the five
 * ports after it. Services reach it with REDIS_URL=redis-cluster://127.0.0.1:17001,127.0.0.1:17002,…
 */
import { loadLocalConfig } from './config.js';
import { runClusterCli } from './launcher-cli.js';
import { stderrLog } from './log.js';
import {
  redisClusterDownByHand,
  redisClusterNodes,
  redisClusterUpByHand,
  tidyRedisCluster,
} from './redis-cluster-server.js';

const cfg = loadLocalConfig();
process.exitCode = await runClusterCli(
  process.argv.slice(2),
  {
    name: 'redis cluster',
    command: 'redis-cluster',
    up: async (log) => {
      const up = await redisClusterUpByHand(cfg, log);
      return { started: up.started, reach: `REDIS_URL=${up.url}` };
    },
    down: (log) => redisClusterDownByHand(cfg, log),
    tidy: (log) => tidyRedisCluster(cfg, log),
    status: async (log) => {
      const answering = await Promise.all(
        redisClusterNodes(cfg).map((node) => node.answers().catch(() => false)),
      );
      redisClusterNodes(cfg).forEach((node, i) =>
        log(`${node.name}: ${answering[i] ? 'answering' : 'not answering'} on ${node.address}`),
      );
      return answering.every(Boolean);
    },
  },
  stderrLog,
);
