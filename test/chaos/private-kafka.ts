import { rmSync } from 'node:fs';
import { loadLocalConfig } from '../../deploy/local/config.js';
import { kafkaServer } from '../../deploy/local/kafka-server.js';
import { stderrLog } from '../../deploy/local/log.js';
import { bringDown, bringUp, type ManagedServer } from '../../deploy/local/managed-server.js';
import type { SpawnSpec } from '../../deploy/local/process-control.js';
import { freePort } from '../helpers/ports.js';

/**
 * A Kafka broker of the suite's own (deploy/local's launcher on free ports, so the shared 19092
 * broker other runs use is never touched). `restart` stops the process and starts it again on the
 * SAME storage — a broker restart, not a new cluster: topics and offsets survive.
 */
export interface PrivateKafka {
  readonly brokers: string[];
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

export async function startPrivateKafka(): Promise<PrivateKafka> {
  const port = await freePort();
  let controllerPort = await freePort();
  while (controllerPort === port) controllerPort = await freePort();
  const cfg = loadLocalConfig({
    ...process.env,
    KAFKA_PORT: String(port),
    KAFKA_CONTROLLER_PORT: String(controllerPort),
    TOOLGATE_KAFKA_HEAP: process.env.TOOLGATE_KAFKA_HEAP ?? '512m',
  });
  const fresh = kafkaServer(cfg);
  let spec: SpawnSpec | undefined;
  // The first start formats storage; later starts reuse the command and keep the data.
  const server: ManagedServer = {
    ...fresh,
    async prepare(log) {
      spec ??= await fresh.prepare(log);
      return spec;
    },
  };
  const start = async (): Promise<void> => {
    await bringUp(server, cfg.startTimeoutMs, stderrLog);
  };
  const stop = async (): Promise<void> => {
    await bringDown(server, stderrLog);
  };
  await start();
  return {
    brokers: [`${cfg.kafka.host}:${port}`],
    start,
    stop,
    async destroy() {
      await stop();
      rmSync(fresh.runDir, { recursive: true, force: true });
    },
  };
}
