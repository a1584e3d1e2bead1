import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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

export interface PrivateKafkaOptions {
  /**
   * Given the port the broker will listen on (127.0.0.1), the `host:port` it tells clients to
   * connect to instead, e.g. a fault proxy in front of it; `brokers` is then that address. Default:
   * the listener itself.
   */
  readonly advertise?: (listenPort: number) => Promise<string>;
}

export async function startPrivateKafka(options: PrivateKafkaOptions = {}): Promise<PrivateKafka> {
  const port = await freePort();
  let controllerPort = await freePort();
  while (controllerPort === port) controllerPort = await freePort();
  const cfg = loadLocalConfig({
    ...process.env,
    KAFKA_PORT: String(port),
    KAFKA_CONTROLLER_PORT: String(controllerPort),
    TOOLGATE_KAFKA_HEAP: process.env.TOOLGATE_KAFKA_HEAP ?? '512m',
  });
  const advertised = options.advertise === undefined ? undefined : await options.advertise(port);
  const fresh = kafkaServer(cfg);
  let spec: SpawnSpec | undefined;
  // The first start formats storage; later starts reuse the command and keep the data.
  const server: ManagedServer = {
    ...fresh,
    async prepare(log) {
      if (spec === undefined) {
        spec = await fresh.prepare(log);
        if (advertised !== undefined) advertise(join(fresh.runDir, 'server.properties'), advertised);
      }
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
    brokers: [advertised ?? `${cfg.kafka.host}:${port}`],
    start,
    stop,
    async destroy() {
      await stop();
      rmSync(fresh.runDir, { recursive: true, force: true });
    },
  };
}

function advertise(propertiesFile: string, address: string): void {
  const text = readFileSync(propertiesFile, 'utf8');
  writeFileSync(
    propertiesFile,
    text.replace(/^advertised\.listeners=.*$/m, `advertised.listeners=PLAINTEXT://${address}`),
  );
}
