/**
 * `npm run redis-cluster:up` / `redis-cluster:down` (also `status`): a local Redis Cluster of three
 * masters with one replica each (`tidy` stops nodes a test run started and no live run holds), on 127.0.0.1:$TOOLGATE_REDIS_CLUSTER_PORT (17001) and the five
 * ports after it. Services reach it with REDIS_URL=redis-cluster://127.0.0.1:17001,127.0.0.1:17002,…
 */
import { loadLocalConfig } from './config.js';
import { stderrLog } from './log.js';
import {
  redisClusterDownByHand,
  redisClusterNodes,
  redisClusterUpByHand,
  tidyRedisCluster,
} from './redis-cluster-server.js';

const cfg = loadLocalConfig();
const command = process.argv[2];
try {
  switch (command) {
    case 'up': {
      const started = Date.now();
      const up = await redisClusterUpByHand(cfg, stderrLog);
      stderrLog(
        `redis cluster ${up.started ? 'up' : 'already running'} in ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
          `REDIS_URL=${up.url}`,
      );
      break;
    }
    case 'down':
      await redisClusterDownByHand(cfg, stderrLog);
      break;
    case 'tidy':
      if ((await tidyRedisCluster(cfg, stderrLog)) === 0) stderrLog('redis cluster: nothing to tidy');
      break;
    case 'status': {
      const answering = await Promise.all(
        redisClusterNodes(cfg).map((node) => node.answers().catch(() => false)),
      );
      redisClusterNodes(cfg).forEach((node, i) =>
        stderrLog(`${node.name}: ${answering[i] ? 'answering' : 'not answering'} on ${node.address}`),
      );
      process.exitCode = answering.every(Boolean) ? 0 : 1;
      break;
    }
    default:
      stderrLog('usage: redis-cluster <up|down|status|tidy>');
      process.exitCode = 2;
  }
} catch (err) {
  stderrLog(`redis cluster ${command}: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
