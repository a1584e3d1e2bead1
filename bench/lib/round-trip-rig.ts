/**
 * The paths the latency benchmarks compare, set up side by side on fresh topics:
 * - toolgate: the agent SDK (`runTurn`, one OpenAI-shaped call per turn, a fresh task per call) in
 *   this process, an executor in a child process, the result read back by the SDK;
 * - raw: a kafkajs producer with the bus's settings (idempotent, acks=all, one request in flight)
 *   sends a record of about a call event's size, a raw pass-through child forwards it, a kafkajs
 *   consumer in this process receives it;
 * - optionally, the same raw round trip with `@platformatic/kafka` as the client on all three legs.
 */
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import type { ChatCompletionMessage } from 'openai/resources/chat/completions';
import { createToolgateClient } from '../../services/sdk/toolgate-client.js';
import { NOOP_TOOL } from './bench-tools.js';
import { childPlacement, spawnExecutorChild, type ExecutorChild } from './child-protocol.js';
import { nowMs } from './report.js';
import type { BenchServers } from './servers.js';
import {
  AUDIENCE,
  createBenchTopics,
  ISSUER,
  KID,
  PRINCIPAL,
  runName,
  type BenchKeys,
  type BenchTopics,
} from './toolgate-stack.js';

/** Raw payloads are padded to about the size of an encoded call event. */
const RAW_PAYLOAD_BYTES = 700;

export interface RoundTripRig {
  /** The executor child (toolgate) and the pass-through child (raw), both ready. */
  readonly executor: ExecutorChild;
  readonly echo: ExecutorChild;
  readonly toolgate: BenchTopics;
  readonly raw: BenchTopics;
  /** One toolgate call through the SDK; resolves when its result is back, with whether it was SUCCESS. */
  toolgateCall(taskId: string, n: number): Promise<{ readonly atMs: number; readonly success: boolean }>;
  /** One raw round trip tagged `tag`; resolves with the time the echo was received. */
  rawCall(tag: string, key: string): Promise<number>;
  /** A raw record's value for `tag` (for bursts published by other means). */
  rawValue(tag: string): Buffer;
  /** Raw round trips still waiting for their echo. */
  readonly rawPending: () => number;
  /** With `withPlatformatic`: one raw round trip on `@platformatic/kafka`, as `rawCall`. */
  readonly platformaticCall?: (tag: string, key: string) => Promise<number>;
  close(): Promise<void>;
}

/** Raw round trips waiting for their echo, by the tag their record carries. */
interface EchoWaits {
  /** An echo arrived: the round trip its tag names ends now. */
  received(value: Buffer | undefined | null): void;
  /** Sends a record tagged `tag` with `send`; resolves with the time its echo arrived. */
  roundTrip(tag: string, send: () => Promise<unknown>): Promise<number>;
  pending(): number;
}

function echoWaits(): EchoWaits {
  const waiting = new Map<string, (receivedAtMs: number) => void>();
  return {
    received(value) {
      const at = nowMs();
      // The tag is the text before the record's first space.
      const tag = value?.toString('utf8', 0, 64).split(' ')[0] ?? '';
      waiting.get(tag)?.(at);
      waiting.delete(tag);
    },
    roundTrip: (tag, send) =>
      new Promise<number>((resolve, reject) => {
        waiting.set(tag, resolve);
        send().catch((err: Error) => {
          waiting.delete(tag);
          reject(err);
        });
      }),
    pending: () => waiting.size,
  };
}

/** Starts both paths; the executor child runs with the given in-flight bounds. */
export async function openRoundTripRig(
  servers: BenchServers,
  keys: BenchKeys,
  options: {
    readonly name: string;
    readonly maxConcurrency: number;
    readonly partitionsConcurrently: number;
    /** Also set up the raw round trip on `@platformatic/kafka` (`platformaticCall`). */
    readonly withPlatformatic?: boolean;
  },
): Promise<RoundTripRig> {
  const cleanups: Array<() => Promise<unknown>> = [];
  const close = async (): Promise<void> => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  };
  try {
    const tg = await createBenchTopics(servers, runName(`${options.name}-toolgate`));
    cleanups.push(() => tg.close());
    const raw = await createBenchTopics(servers, runName(`${options.name}-raw`));
    cleanups.push(() => raw.close());
    const child = (mode: 'toolgate' | 'raw-one' | 'raw-one-platformatic', t: BenchTopics): ExecutorChild =>
      spawnExecutorChild({
        mode,
        ...childPlacement(servers, keys, t),
        maxConcurrency: options.maxConcurrency,
        partitionsConcurrently: options.partitionsConcurrently,
        resultPartition: 0,
      });
    const executor = child('toolgate', tg);
    cleanups.push(() => executor.stop());
    const echo = child('raw-one', raw);
    cleanups.push(() => echo.stop());
    await Promise.all([executor.ready, echo.ready]);

    // The SDK side of toolgate: one client instance reading reply partition 0.
    const client = createToolgateClient({
      publisher: tg.bus,
      subscriber: tg.bus,
      codec: tg.codec,
      topics: tg.topics,
      instanceId: `${tg.prefix}-agent`,
      replySlot: 0,
      signing: { key: keys.privateKey, issuer: ISSUER, audience: AUDIENCE, kid: KID, ttlSeconds: 600 },
      defaultTimeoutMs: 60_000,
    });
    await client.start();
    cleanups.push(() => client.stop());

    // The raw side: a producer with the bus's settings, and a consumer of the echoes.
    const kafka = new Kafka({
      clientId: `${raw.prefix}-agent`,
      brokers: servers.brokers,
      logLevel: logLevel.ERROR,
    });
    const producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    await producer.connect();
    cleanups.push(() => producer.disconnect());
    const echoes = echoWaits();
    const consumer = kafka.consumer({ groupId: `${raw.prefix}-agent`, maxWaitTimeInMs: 1_000 });
    await consumer.connect();
    cleanups.push(() => consumer.disconnect());
    await consumer.subscribe({ topics: [raw.topics.results], fromBeginning: true });
    await consumer.run({
      eachMessage: ({ message }) => {
        echoes.received(message.value);
        return Promise.resolve();
      },
    });
    const rawValue = (tag: string): Buffer => Buffer.from(`${tag} `.padEnd(RAW_PAYLOAD_BYTES, '.'));
    const platformaticCall =
      options.withPlatformatic === true
        ? await openPlatformaticRoundTrip(servers, options.name, rawValue, cleanups, (t) =>
            child('raw-one-platformatic', t),
          )
        : undefined;

    return {
      executor,
      echo,
      toolgate: tg,
      raw,
      rawValue,
      rawPending: () => echoes.pending(),
      ...(platformaticCall === undefined ? {} : { platformaticCall }),
      async toolgateCall(taskId, n) {
        const turn: ChatCompletionMessage = {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: [
            {
              id: `call_${n}`,
              type: 'function',
              function: { name: NOOP_TOOL, arguments: JSON.stringify({ n }) },
            },
          ],
        };
        const outcome = await client.runTurn(
          { provider: 'openai', response: turn },
          { principal: PRINCIPAL, taskId, step: 0 },
        );
        return { atMs: nowMs(), success: outcome.results[0]?.outcome === 'SUCCESS' };
      },
      rawCall(tag, key) {
        return echoes.roundTrip(tag, () =>
          producer.send({ topic: raw.topics.calls, acks: -1, messages: [{ key, value: rawValue(tag) }] }),
        );
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * The raw round trip on `@platformatic/kafka`: its own topics, an idempotent acks=all producer and a
 * consumer of the echoes in this process, and a pass-through child on the same client. Registers
 * its cleanups in `cleanups`; resolves with the call function once the child is ready.
 */
async function openPlatformaticRoundTrip(
  servers: BenchServers,
  name: string,
  rawValue: (tag: string) => Buffer,
  cleanups: Array<() => Promise<unknown>>,
  spawnEcho: (topics: BenchTopics) => ExecutorChild,
): Promise<(tag: string, key: string) => Promise<number>> {
  // Loaded here, so the benchmarks that do not use the second client never load it.
  const { Consumer } = await import('@platformatic/kafka');
  const { platformaticProducer } = await import('./raw-pass-through-platformatic.js');
  const topics = await createBenchTopics(servers, runName(`${name}-platformatic`));
  cleanups.push(() => topics.close());
  const echo = spawnEcho(topics);
  cleanups.push(() => echo.stop());
  await echo.ready;
  const producer = platformaticProducer(`${topics.prefix}-agent`, servers.brokers);
  cleanups.push(() => producer.close());
  const consumer = new Consumer({
    clientId: `${topics.prefix}-agent`,
    groupId: `${topics.prefix}-agent`,
    bootstrapBrokers: [...servers.brokers],
    maxWaitTime: 1_000,
    autocommit: false,
  });
  const echoes = echoWaits();
  const stream = await consumer.consume({ topics: [topics.topics.results], mode: 'earliest' });
  cleanups.push(() => consumer.close());
  cleanups.push(() => stream.close());
  stream.on('data', (message: { value?: Buffer }) => echoes.received(message.value));
  return (tag, key) =>
    echoes.roundTrip(tag, () =>
      producer.send({
        messages: [{ topic: topics.topics.calls, key: Buffer.from(key), value: rawValue(tag) }],
      }),
    );
}
