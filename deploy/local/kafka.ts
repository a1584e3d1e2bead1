/**
 * `npm run kafka:up` / `kafka:down` (also `tsx deploy/local/kafka.ts status`): a local single-node
 * Apache Kafka (KRaft) on 127.0.0.1:$KAFKA_PORT (19092), fetched with Maven on first use.
 */
import { kafkaServer } from './kafka-server.js';
import { runLauncherProcess } from './launcher-cli.js';

await runLauncherProcess(kafkaServer);
