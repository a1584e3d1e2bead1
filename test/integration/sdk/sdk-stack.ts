import type { Principal } from '../../../libs/core/types.js';
import type { EventKind, EventKinds } from '../../../libs/events/contracts.js';
import type { TopicNames } from '../../../libs/events/topics.js';
import type { BatchHandler, EventSubscriber, SubscribeOptions } from '../../../libs/ports/event-bus.js';
import type { ToolgateClientOptions } from '../../../services/sdk/client-options.js';
import { createToolgateClient, type ToolgateClient } from '../../../services/sdk/toolgate-client.js';
import { consumeMessages } from '../../helpers/kafka.js';
import { uniqueName } from '../../helpers/names.js';
import { Effects, fixtureTools, registryOf } from '../../unit/sdk/test-tools.js';
import { startFixtureExecutor } from '../executor/test-parts.js';

export const ISSUER = 'agent-backend-sdk-test';
export const AUDIENCE = 'toolgate-executor-sdk-test';
const KID = 'sdk-test-key';

/** The agent the SDK tests' calls run for: it may read orders, refund them and move stock. */
export const principal: Principal = {
  id: 'agent-7',
  tenant: 't1',
  kind: 'agent',
  scopes: ['orders:read', 'orders:refund', 'inventory:write'],
  roles: [],
};

/** Partition counts: the results topic has one partition per SDK instance slot. */
export const PARTITIONS = { calls: 4, results: 3, audit: 1, dlq: 1 } as const;

/** Every partition of the results topic an instance fetched messages from, one entry per message. */
export type FetchLog = Map<string, number[]>;

/**
 * Real Kafka, the schema registry and Redis, with the real executor in-process running the three
 * provider-fixture tools, and SDK clients on demand. Names are unique per stack.
 */
export interface SdkStack {
  readonly topics: TopicNames;
  readonly effects: Effects;
  /** Partitions each client instance (by instance id) fetched results from. */
  readonly fetched: FetchLog;
  client(overrides?: Partial<ToolgateClientOptions>): Promise<ToolgateClient>;
  /** Reads `count` messages of a topic from the beginning and decodes them. */
  read<K extends EventKind>(kind: K, count: number): Promise<EventKinds[K][]>;
  close(): Promise<void>;
}

export async function createSdkStack(name: string): Promise<SdkStack> {
  const effects = new Effects();
  const registry = registryOf(fixtureTools(effects));
  const fixture = await startFixtureExecutor(name, {
    registry,
    partitions: PARTITIONS,
    issuer: ISSUER,
    audience: AUDIENCE,
    kid: KID,
    policyName: 'sdk-test',
  });
  const { kafka, topics, bus, codec, privateKey } = fixture;

  const fetched: FetchLog = new Map();
  // The bus itself, observed: records the partition of every results message handed to a client.
  const counting = (instanceId: string): EventSubscriber => ({
    subscribe: (options: SubscribeOptions, handler: BatchHandler) =>
      bus.subscribe(options, (batch, control) => {
        fetched.set(instanceId, [
          ...(fetched.get(instanceId) ?? []),
          ...batch.messages.map(() => batch.partition),
        ]);
        return handler(batch, control);
      }),
  });
  const clients: ToolgateClient[] = [];
  return {
    topics,
    effects,
    fetched,
    async client(overrides = {}) {
      const instanceId = overrides.instanceId ?? uniqueName('agent');
      const client = createToolgateClient({
        publisher: bus,
        subscriber: counting(instanceId),
        codec,
        topics,
        instanceId,
        replySlot: 0,
        tools: registry,
        signing: {
          key: privateKey,
          issuer: ISSUER,
          audience: AUDIENCE,
          kid: KID,
          ttlSeconds: 120,
        },
        defaultTimeoutMs: 30_000,
        ...overrides,
      });
      clients.push(client);
      await client.start();
      return client;
    },
    async read(kind, count) {
      const consumer = kafka.consumer({
        groupId: kafka.uniqueGroupId(`${name}_${kind}`),
        maxWaitTimeInMs: 100,
      });
      const got = await consumeMessages(consumer, topics[kind], count);
      return Promise.all(got.map((m) => codec.decode(kind, m.value!)));
    },
    async close() {
      await Promise.all(clients.map((c) => c.stop()));
      await fixture.close();
    },
  };
}
