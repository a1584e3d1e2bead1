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
import { runClusterCli } from './launcher-cli.js';
import { stderrLog } from './log.js';

const cfg = loadLocalConfig();
const brokers = kafkaClusterBrokers(cfg.kafkaCluster);
process.exitCode = await runClusterCli(
  process.argv.slice(2),
  {
    name: 'kafka cluster',
    command: 'kafka-cluster',
    up: async (log) => {
      const up = await kafkaClusterUpByHand(cfg, log);
      return { started: up.started, reach: `KAFKA_BROKERS=${up.brokers.join(',')}` };
    },
    down: (log) => kafkaClusterDownByHand(cfg, log),
    tidy: (log) => tidyKafkaCluster(cfg, log),
    status: async (log) => {
      const answers = await kafkaAnswers(brokers);
      log(`kafka cluster: ${answers ? 'answering' : 'not answering'} on ${brokers.join(',')}`);
      return answers;
    },
  },
  stderrLog,
);
