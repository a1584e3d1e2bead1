import type { KafkaMessage } from 'kafkajs';
import type { BusMessage } from '../../ports/event-bus.js';

/** A kafkajs message as the bus port's BusMessage (the last value of a repeated header wins). */
export function toBusMessage(topic: string, partition: number, message: KafkaMessage): BusMessage {
  const headers: Record<string, string> = {};
  for (const [name, raw] of Object.entries(message.headers ?? {})) {
    const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
    if (value !== undefined) headers[name] = Buffer.isBuffer(value) ? value.toString('utf8') : String(value);
  }
  return {
    topic,
    partition,
    offset: message.offset,
    key: message.key === null ? '' : message.key.toString('utf8'),
    value: message.value ?? Buffer.alloc(0),
    headers,
    timestampMs: Number(message.timestamp),
  };
}
