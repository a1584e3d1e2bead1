/**
 * `npm run kafka-cluster:up` / `kafka-cluster:down` (also `status`, `tidy`): a local three-node
 * Kafka cluster (KRaft, each node broker and controller) on 127.0.0.1:$TOOLGATE_KAFKA_CLUSTER_PORT
 * (29092) and the two ports after it; topics replicate 3 ways with min.insync.replicas 2.
 */
import { loadLocalConfig } from './config.js';
import {
  kafkaClusterBrokers,
  kafkaClusterDownByHand,
  kafkaClusterUpByHand,
  tidyKafkaCluster,
} from './kafka-cluster-server.js';
import { kafkaAnswers } from './kafka-probe.js';
import { stderrLog } from './log.js';

const cfg = loadLocalConfig();
const command = process.argv[2];
const brokers = kafkaClusterBrokers(cfg.kafkaCluster);
try {
  switch (command) {
    case 'up': {
      const started = Date.now();
      const up = await kafkaClusterUpByHand(cfg, stderrLog);
      stderrLog(
        `kafka cluster ${up.started ? 'up' : 'already running'} in ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
          `KAFKA_BROKERS=${up.brokers.join(',')}`,
      );
      break;
    }
    case 'down':
      await kafkaClusterDownByHand(cfg, stderrLog);
      break;
    case 'tidy':
      if ((await tidyKafkaCluster(cfg, stderrLog)) === 0) stderrLog('kafka cluster: nothing to tidy');
      break;
    case 'status': {
      const answers = await kafkaAnswers(brokers);
      stderrLog(`kafka cluster: ${answers ? 'answering' : 'not answering'} on ${brokers.join(',')}`);
      process.exitCode = answers ? 0 : 1;
      break;
    }
    default:
      stderrLog('usage: kafka-cluster <up|down|status|tidy>');
      process.exitCode = 2;
  }
} catch (err) {
  stderrLog(`kafka cluster ${command}: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
