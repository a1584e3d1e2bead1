/**
 * `npm run kafka:up` / `kafka:down` (also `tsx deploy/local/kafka.ts status`): a local single-node
 * Apache Kafka (KRaft) on 127.0.0.1:$KAFKA_PORT (19092), fetched with Maven on first use.
 */
import { loadLocalConfig } from './config.js';
import { kafkaServer } from './kafka-server.js';
import { runLauncherCli } from './launcher-cli.js';
import { stderrLog } from './log.js';

const cfg = loadLocalConfig();
process.exitCode = await runLauncherCli(
  process.argv.slice(2),
  kafkaServer(cfg),
  cfg.startTimeoutMs,
  stderrLog,
);
