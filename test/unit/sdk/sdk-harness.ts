import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Message } from '@anthropic-ai/sdk/resources/messages';
import type { ChatCompletion } from 'openai/resources/chat/completions';
import { vi } from 'vitest';
import { createPrincipalVerifier, type PrincipalVerifier } from '../../../libs/auth/principal-verifier.js';
import { MemoryEventBus } from '../../../libs/bus/memory/memory-event-bus.js';
import type { Principal } from '../../../libs/core/types.js';
import type { ToolCallRequestedEvent, ToolCallResultEvent } from '../../../libs/events/contracts.js';
import { LocalEventCodec } from '../../../libs/events/local-codec.js';
import { topicNames, type TopicNames } from '../../../libs/events/topics.js';
import type {
  BusMessage,
  EventPublisher,
  OutgoingMessage,
  Subscription,
} from '../../../libs/ports/event-bus.js';
import type { EventCodec } from '../../../libs/events/event-codec.js';
import type { ToolgateClientOptions } from '../../../services/sdk/client-options.js';
import { createToolgateClient, type ToolgateClient } from '../../../services/sdk/toolgate-client.js';
import { topicSpecs } from '../../helpers/bus-topics.js';
import { uniqueName } from '../../helpers/names.js';

export const ISSUER = 'agent-backend';
export const AUDIENCE = 'toolgate-executor';

export const principal: Principal = {
  id: 'agent-7',
  tenant: 't1',
  kind: 'agent',
  scopes: ['orders:read', 'orders:refund', 'inventory:write'],
  roles: ['support'],
  onBehalfOf: 'user-42',
};

export function openAIFixture(): ChatCompletion {
  return JSON.parse(
    readFileSync('test/fixtures/providers/openai-parallel-tool-calls.json', 'utf8'),
  ) as ChatCompletion;
}

export function anthropicFixture(): Message {
  return JSON.parse(
    readFileSync('test/fixtures/providers/anthropic-parallel-tool-use.json', 'utf8'),
  ) as Message;
}

/** A call as the fake executor received it. */
export interface ReceivedCall {
  readonly event: ToolCallRequestedEvent;
  readonly message: BusMessage;
}

/** A publisher that records every publish call and passes it on. */
export class RecordingPublisher implements EventPublisher {
  readonly calls: Array<{ topic: string; messages: readonly OutgoingMessage[] }> = [];
  constructor(private readonly inner: EventPublisher) {}
  publish(topic: string, messages: readonly OutgoingMessage[]): Promise<void> {
    this.calls.push({ topic, messages });
    return this.inner.publish(topic, messages);
  }
}

/**
 * A stand-in for the executor on the memory bus: consumes the calls topic, records each call and
 * answers it as `respond` says (default: verify the principal, refuse non-object arguments with
 * SCHEMA_INVALID, otherwise SUCCESS echoing the tool and arguments).
 */
export class FakeExecutor {
  readonly received: ReceivedCall[] = [];
  respond: (call: ReceivedCall) => Promise<readonly Partial<ToolCallResultEvent>[]> = (call) =>
    this.defaultAnswer(call);
  private subscription: Subscription | undefined;

  constructor(
    private readonly bus: MemoryEventBus,
    private readonly codec: EventCodec,
    private readonly topics: TopicNames,
    readonly verifier: PrincipalVerifier,
  ) {}

  async start(): Promise<void> {
    this.subscription = await this.bus.subscribe(
      { groupId: uniqueName('fake_executor'), topics: [this.topics.calls], fromBeginning: true },
      async (batch, control) => {
        for (const message of batch.messages) {
          const call = { event: await this.codec.decode('calls', message.value), message };
          this.received.push(call);
          const answers = await this.respond(call);
          if (answers.length > 0) await this.answer(call.event, ...answers);
          control.markDone(message.offset);
        }
      },
    );
  }

  stop(): Promise<void> {
    return this.subscription?.stop() ?? Promise.resolve();
  }

  /** Publishes results for `request` to its reply address, in one publish (so in this order). */
  async answer(
    request: ToolCallRequestedEvent,
    ...results: readonly Partial<ToolCallResultEvent>[]
  ): Promise<void> {
    const messages = await Promise.all(
      results.map(async (overrides) => ({
        key: request.callId,
        value: await this.codec.encode('results', resultEvent(request, overrides)),
        partition: request.replyPartition,
      })),
    );
    await this.bus.publish(request.replyTopic, messages);
  }

  async waitForCalls(count: number): Promise<ReceivedCall[]> {
    await vi.waitFor(
      () => {
        if (this.received.length < count)
          throw new Error(`received ${this.received.length} of ${count} calls`);
      },
      { timeout: 5_000, interval: 5 },
    );
    return this.received;
  }

  private async defaultAnswer(call: ReceivedCall): Promise<readonly Partial<ToolCallResultEvent>[]> {
    try {
      await this.verifier.verify(call.event.principalAssertion);
    } catch {
      return [refusal('UNAUTHORIZED', 'INVALID_PRINCIPAL', 'The caller could not be verified.')];
    }
    let args: unknown;
    try {
      args = JSON.parse(call.event.argumentsJson);
    } catch {
      return [refusal('SCHEMA_INVALID', 'SCHEMA_INVALID', 'The arguments are not valid JSON.')];
    }
    if (args === null || typeof args !== 'object' || Array.isArray(args)) {
      return [refusal('SCHEMA_INVALID', 'SCHEMA_INVALID', 'The arguments must be a JSON object.')];
    }
    return [
      {
        outcome: 'SUCCESS',
        payloadJson: JSON.stringify({ tool: call.event.tool, args }),
        toolInvocations: 1,
      },
    ];
  }
}

export function refusal(
  outcome: ToolCallResultEvent['outcome'],
  code: string,
  message: string,
): Partial<ToolCallResultEvent> {
  return {
    outcome,
    error: { code, message, retryable: outcome === 'SCHEMA_INVALID', retryAfterMs: null, suggestedFix: null },
  };
}

/** A result event answering `request`, with sensible defaults. */
export function resultEvent(
  request: ToolCallRequestedEvent,
  overrides: Partial<ToolCallResultEvent> = {},
): ToolCallResultEvent {
  return {
    callId: request.callId,
    providerCallId: request.providerCallId,
    tool: request.tool,
    tenant: request.tenant,
    taskId: request.taskId,
    outcome: 'SUCCESS',
    payloadJson: null,
    error: null,
    idempotencyKey: request.idempotencyKey,
    toolInvocations: 0,
    source: 'executor',
    producerId: 'fake-executor',
    traceId: request.traceId,
    tokensIn: 0,
    tokensOut: 0,
    completedAtMs: Date.now(),
    ...overrides,
  };
}

/** One memory bus with the four topics, a signing key pair, a fake executor, and clients on demand. */
export interface SdkHarness {
  readonly bus: MemoryEventBus;
  readonly codec: LocalEventCodec;
  readonly topics: TopicNames;
  readonly publisher: RecordingPublisher;
  readonly executor: FakeExecutor;
  readonly signingKey: KeyObject;
  readonly verifier: PrincipalVerifier;
  /** A started client on reply slot `replySlot` (default 0). */
  client(overrides?: Partial<ToolgateClientOptions>): Promise<ToolgateClient>;
  close(): Promise<void>;
}

export async function createSdkHarness(resultsPartitions = 4): Promise<SdkHarness> {
  const bus = new MemoryEventBus({ commitIntervalMs: 10, redeliveryDelayMs: 10 });
  const codec = new LocalEventCodec();
  const topics = topicNames(uniqueName('sdk'));
  await bus.ensureTopics(topicSpecs(topics, { calls: 4, results: resultsPartitions, audit: 1, dlq: 1 }));
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const verifier = createPrincipalVerifier({ keys: { k1: publicKey }, issuer: ISSUER, audience: AUDIENCE });
  const publisher = new RecordingPublisher(bus);
  const executor = new FakeExecutor(bus, codec, topics, verifier);
  await executor.start();
  const clients: ToolgateClient[] = [];
  return {
    bus,
    codec,
    topics,
    publisher,
    executor,
    signingKey: privateKey,
    verifier,
    async client(overrides = {}) {
      const client = createToolgateClient({
        publisher,
        subscriber: bus,
        codec,
        topics,
        instanceId: uniqueName('agent'),
        replySlot: 0,
        signing: { key: privateKey, issuer: ISSUER, audience: AUDIENCE, kid: 'k1', ttlSeconds: 120 },
        defaultTimeoutMs: 5_000,
        ...overrides,
      });
      clients.push(client);
      await client.start();
      return client;
    },
    async close() {
      await Promise.all(clients.map((c) => c.stop()));
      await executor.stop();
      await bus.close();
    },
  };
}
