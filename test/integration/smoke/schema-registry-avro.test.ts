import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { describe, expect, it } from 'vitest';
import { schemaRegistryUrl } from '../../helpers/env.js';
import type { TestKafka } from '../../helpers/kafka.js';
import { consumeMessages, createTestKafka } from '../../helpers/kafka.js';
import { uniqueName } from '../../helpers/names.js';
import { openForSuite } from '../../helpers/stack-lifecycle.js';

const SCHEMA = {
  type: 'record',
  name: 'SmokeToolCall',
  namespace: 'toolgate.smoke',
  fields: [
    { name: 'callId', type: 'string' },
    { name: 'tool', type: 'string' },
    { name: 'attempt', type: 'int' },
    { name: 'args', type: { type: 'map', values: 'string' } },
    { name: 'note', type: ['null', 'string'], default: null },
  ],
};

describe('schema registry: Avro through Kafka', () => {
  let tk: TestKafka;
  openForSuite(() => (tk = createTestKafka('smoke-avro')));

  it('registers a schema, encodes, produces, consumes and decodes with a fresh client', async () => {
    const registry = new SchemaRegistry({ host: schemaRegistryUrl() });
    const subject = `${uniqueName('smoke_avro')}-value`;
    const { id } = await registry.register(
      { type: SchemaType.AVRO, schema: JSON.stringify(SCHEMA) },
      { subject },
    );
    expect(id).toBeGreaterThan(0);
    expect(await registry.getLatestSchemaId(subject)).toBe(id);

    const payload = { callId: 'c-1', tool: 'refund', attempt: 2, args: { order: 'o-9' }, note: null };
    const encoded = await registry.encode(id, payload);
    // Confluent wire format: magic byte 0, then the schema id as a big-endian int32.
    expect(encoded[0]).toBe(0);
    expect(encoded.readInt32BE(1)).toBe(id);

    const topic = await tk.uniqueTopic('smoke_avro', 1);
    const producer = tk.producer();
    await producer.connect();
    await producer.send({ topic, acks: -1, messages: [{ key: payload.callId, value: encoded }] });

    const [msg] = await consumeMessages(tk.consumer({ groupId: tk.uniqueGroupId('smoke_avro') }), topic, 1);
    // A second client has no cached schemas, so decoding must fetch the schema by id.
    const reader = new SchemaRegistry({ host: schemaRegistryUrl() });
    expect(await reader.decode(msg!.value!)).toEqual(payload);
  });
});
